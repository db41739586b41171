// The contrastive loss of BridgeTowerForContrastiveLearning, in one place: the model's forward (return_loss),
// the trainer's global-batch loss (--gather_embeddings: the caller gathers the embeddings with dist/gather.h
// first) and the multi-process tests all compute it here. ATen only (no torch/torch.h).
#pragma once
#include <ATen/core/Tensor.h>

namespace bt::model {

// One direction: cross_entropy(a b^T * scale, arange(rows)); a, b [N, D]; scale a scalar (exp(logit_scale)).
// label_smoothing e: the target puts 1 - e on the true pair and e / N on every pair (torch's cross_entropy).
at::Tensor contrastive_ce(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale,
                          double label_smoothing = 0.0);

// HF's loss: (CE(text, image) + CE(text, cross) + CE(image, cross)) / 3 with scale exp(logit_scale), over the
// rows given (a rank's batch, or the global batch after gather_with_grad). Embeddings [N, D], L2-normalised.
at::Tensor contrastive_loss(const at::Tensor& text, const at::Tensor& image, const at::Tensor& cross,
                            const at::Tensor& logit_scale, double label_smoothing = 0.0);

}  // namespace bt::model
