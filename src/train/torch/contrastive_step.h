// One optimizer step of contrastive training (the body of the trainer's loop): gradient_accumulation_steps
// micro-batches forward and backward, the gradients averaged over the ranks, clipped and applied.
//
// Accumulation over K micro-batches of B rows, two ways (--contrastive_accumulation):
//  - exact (default): the step trains the weights one batch of K x B rows would (GradCache; open_clip's
//    --accum-freq). Pass 1 runs the K micro-batches forward without autograd, keeping their embeddings and the
//    RNG state each started from; the contrastive loss over all K x B embeddings (the global batch with
//    --gather_embeddings) is backpropagated to those embeddings (and logit_scale). Pass 2 runs each micro-batch
//    forward again under its saved RNG state (the same dropout masks) and backpropagates <embedding gradient,
//    embeddings>. The logged loss is the K x B batch's. Cost: one extra forward per micro-batch.
//  - local: HF Trainer's behaviour, kept for parity runs: each micro-batch's own loss (its B - 1 negatives),
//    averaged. K = 1 is the same step either way.
#pragma once
#include <cstdint>

#include <nlohmann/json.hpp>

#include "model/flops.h"
#include "feed/torch/batch_provider.h"
#include "train/torch/train_setup.h"

namespace bt::train {

struct StepResult {
  double loss = 0;         // exact: the K x B batch's loss; local: the mean of the micro-batches' (and ranks')
  double data_wait_s = 0;  // seconds blocked on the batch provider
  double grad_norm = 0;    // before clipping (0 for a skipped step)
  int64_t samples = 0;     // this rank's
  int64_t skipped_rows = 0;  // bad samples the loader replaced in this step's batches (--on_bad_sample skip)
  // exact: how far pass 2's embeddings strayed from pass 1's (max |difference|): 0 up to kernel nondeterminism
  // when the dropout masks were replayed; -1 without exact accumulation.
  double replay_max_diff = -1;
  bool skipped = false;  // no optimizer step: --fp16's scaler found inf/NaN gradients, or `nonfinite`
  bool nonfinite = false;  // the loss or the gradient norm was NaN/inf (divergence): not applied
};

StepResult train_step(TrainRun& r, feed::BatchProvider& batches);

// The work of the steps (model/flops.h): each micro-batch adds its model FLOPs at its shapes (padded text length,
// each row's real length) to TrainRun::flops as it is taken. all_ranks_flops sums every rank's (collective: every
// rank calls it). work_results: train_results.json's keys for them at `samples_per_s` (every rank's): HF's
// total_flos, model_flops(_per_sample), padding_flops_percent, and per device tflops_per_s, mfu, peak_tflops,
// peak_source (model/flops_device.h: the datasheet on a GPU, the measured GEMM rate on a CPU).
model::StepFlops all_ranks_flops(TrainRun& r);
nlohmann::json work_results(const TrainRun& r, const model::StepFlops& all, double samples_per_s);

}  // namespace bt::train
