// The attention weights of eager attention on libtorch 1.13: dropout(softmax(q k^T / sqrt(d) + mask), p) over the
// last dim, in the dtypes HF's eager attention has under CPU bf16 autocast -- bf16 scores scaled in bf16; a float32
// mask makes the sum and the probabilities float32; without one they stay bf16 -- and kernels/dropout/dropout.h's
// dropout (the same seed draw and mask, so the fused and composite paths drop the same elements).
// For bf16 q and k on the CPU the scale, mask, softmax and dropout are one autograd function with one pass per row
// each way, saving only the probabilities (the composite ops: four passes each way, three saved tensors). Elsewhere
// (float32: its numerics stay torch's; CUDA; other mask shapes) the composite ops.
#pragma once
#include <torch/torch.h>

namespace bt::kernels {

// q [B, H, L, d], k [B, H, S, d]; mask undefined or additive [B, 1, 1, S]. Returns [B, H, L, S].
torch::Tensor attention_weights(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& mask,
                                double dropout_p, bool train);
// The composite ops alone (tests compare the two).
torch::Tensor attention_weights_composite(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& mask,
                                          double dropout_p, bool train);

}  // namespace bt::kernels
