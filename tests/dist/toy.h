// A two-tower toy (image MLP, text MLP, logit scale) trained with a CLIP-style symmetric contrastive loss by
// plain SGD, runnable either as one rank of a job (through bt::dist) or as the single-process reference.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "dist/process_group.h"

namespace bt::dist::testing {

struct ToySpec {
  int per_rank_batch = 4;
  int steps = 3;
  int accum = 1;          // micro-batches per optimizer step
  bool gather = false;    // --gather_embeddings
  bool overlap = true;    // GradientSync hooks
  double bucket_mb = 0.001;  // tiny buckets: several buckets even for the toy
  int init_seed = 1;      // rank r initialises with init_seed + r (broadcast must fix it)
};

struct ToyResult {
  std::vector<double> losses;      // per step, the mean over ranks of the logged loss
  std::vector<double> first_grads; // every parameter's gradient after step 1's reduction, flattened
  std::vector<double> init_params, final_params;
  std::vector<double> buckets;  // {bucket_count, buckets sent from backward hooks in the last step}
};

// One rank of a job (group.world_size() ranks).
ToyResult run_toy_rank(Group& group, const ToySpec& spec);
// What the job must equal: one process at batch world*per_rank_batch (gather), or averaging the per-rank
// half-batch losses (no gather).
ToyResult run_toy_reference(const ToySpec& spec, int world);

void write_result(const std::string& path, const ToyResult& r);
ToyResult read_result(const std::string& path);

// CLIP's loss: (CE(i t^T s) + CE(t i^T s)) / 2 over L2-normalised embeddings, s = exp(logit_scale).
at::Tensor clip_loss(const at::Tensor& image, const at::Tensor& text, const at::Tensor& logit_scale);

}  // namespace bt::dist::testing
