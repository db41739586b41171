// all_gather that keeps the autograd graph (OpenCLIP's gather_features with gather_with_grad=True), for
// contrastive losses whose negatives span the global batch (--gather_embeddings).
//
// gather_with_grad(g, x): x [B, ...] on each rank -> [world_size*B, ...], rank r's rows at [r*B, (r+1)*B)
// (this rank's slice equals x). Backward sums the incoming gradient over ranks (all_reduce) and returns this
// rank's slice.
//
// Equivalence (what the tests check): when every rank computes the SAME global loss L from the gathered tensors
// (e.g. the mean over all world_size*B rows), each rank's parameter gradient is world_size x its own share of
// dL/dtheta, and GradientSync's mean over ranks is then exactly dL/dtheta: the single-process gradient at batch
// world_size*B. No extra loss scaling is needed. world_size 1: returns x.
#pragma once
#include <ATen/core/Tensor.h>

#include "dist/process_group.h"

namespace bt::dist {

at::Tensor gather_with_grad(Group& group, const at::Tensor& x);

// HF BridgeTowerForContrastiveLearning's loss, (CE(t,i) + CE(t,c) + CE(i,c)) / 3 with
// CE(a,b) = cross_entropy(a b^T * exp(logit_scale), arange), over the global batch when gather is true (all three
// embeddings gathered with gradient; every rank then holds the same global loss), else over the local batch.
// Embeddings: [B, D], L2-normalised; logit_scale: the model's log-scale parameter (scalar).
at::Tensor bridgetower_contrastive_loss(Group& group, const at::Tensor& text, const at::Tensor& image,
                                        const at::Tensor& cross, const at::Tensor& logit_scale, bool gather);

// One direction of it: cross_entropy(a b^T * exp(logit_scale), arange(rows)).
at::Tensor contrastive_ce(const at::Tensor& a, const at::Tensor& b, const at::Tensor& logit_scale);

}  // namespace bt::dist
