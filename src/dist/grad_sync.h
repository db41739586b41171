// Gradient averaging over the ranks of a Group, as DDP does it: parameters are packed (in reverse order, the
// order backward produces them) into flat buckets of ~bucket_mb, each bucket is all-reduced (sum) as soon as
// all its gradients exist -- overlapping communication with the rest of backward -- and finish() divides by
// world_size and writes the means back into each parameter's .grad().
//
// Use per optimizer step:
//    for each micro-batch a:  if (a == last) sync.arm();  loss.backward();
//    sync.finish();           // .grad() of every rank now holds the mean over ranks
//    clip, optimizer step, zero_grad
// arm() is optional: without it (or with overlap = false) finish() does the same reduction after backward.
// Accumulation: only the armed backward reduces, and it reduces the accumulated .grad() (previous micro-batches
// plus this one), so gradient_accumulation_steps needs no further care.
//
// Contract: all ranks construct it with the same parameter list (same order/shapes) and call arm()/finish() in
// the same pattern. A parameter without a gradient on a rank counts as zeros there; after finish() every listed
// parameter has a defined .grad(). world_size 1: hooks are never registered and finish() returns at once.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "dist/process_group.h"

namespace bt::dist {

struct GradSyncOptions {
  double bucket_mb = 25;  // DDP's default bucket_cap_mb
  bool overlap = true;    // reduce buckets from backward hooks (else only in finish())
};

class GradientSync {
 public:
  // params: the trainable parameters (requires_grad, dense, one dtype/device per bucket is handled inside).
  GradientSync(Group& group, std::vector<at::Tensor> params, GradSyncOptions options = {});
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // Makes every rank start from rank 0's values (call once after init / after loading a checkpoint on all ranks).
  void broadcast_parameters();
  // The next backward reduces its gradients on the fly.
  void arm();
  // Completes the reduction (or does all of it, if nothing was armed) and writes the mean gradients.
  void finish();

  size_t bucket_count() const;
  // Statistics for benchmarks: seconds finish() spent waiting for communication in the last step.
  double last_wait_s() const { return last_wait_s_; }
  // Buckets the last finish() found already sent from backward hooks (== bucket_count() when fully overlapped).
  size_t last_sent_in_backward() const { return last_sent_in_backward_; }

  struct State;

 private:
  Group& group_;
  std::vector<at::Tensor> params_;
  GradSyncOptions options_;
  std::shared_ptr<State> state_;  // shared with the hooks
  double last_wait_s_ = 0;
  size_t last_sent_in_backward_ = 0;
};

}  // namespace bt::dist
