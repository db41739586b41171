// Dropout for the model's training forward (attention probabilities, hidden states, embeddings): out = x * keep /
// (1 - p), each element kept with probability 1 - p. On the CPU (float32, bf16) one pass each way as an autograd
// function: the mask is a counter-based hash of (seed, element index), so it is neither stored nor drawn element by
// element under the generator's lock (torch::dropout's bernoulli_ + div_ + mul: three passes and a float mask kept
// for backward); backward hashes the same mask again. The seed is drawn from torch's default CPU generator, so the
// masks follow torch.manual_seed, exact resume and gradient checkpointing's RNG replay as bernoulli's did, and do
// not depend on the thread count. Same distribution as torch::dropout, not the same masks. Elsewhere (CUDA, other
// dtypes, p outside (0, 1)) torch::dropout.
#pragma once
#include <torch/torch.h>

namespace bt::kernels {

torch::Tensor dropout(const torch::Tensor& x, double p, bool train);

// A new 64-bit mask seed from torch's default CPU generator (what bernoulli_ draws from), under its lock; one per
// dropout call, for kernels/dropout/dropout_mask.h.
uint64_t draw_dropout_seed();

}  // namespace bt::kernels
