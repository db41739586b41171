// all_gather that keeps the autograd graph (OpenCLIP's gather_features with gather_with_grad=True), for
// contrastive losses whose negatives span the global batch (--gather_embeddings). The loss itself is the model's
// (model/contrastive_loss.h), applied to the gathered embeddings.
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

}  // namespace bt::dist
