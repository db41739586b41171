// One optimizer step (see contrastive_step.h): the local and the exact accumulation, then the shared tail
// (gradient sync, clipping, the AdamW step).
#include "train/torch/contrastive_step.h"

#include <torch/torch.h>

#include <cmath>
#include <optional>
#include <vector>

#include "common/error.h"
#include "dist/gather.h"
#include "kernels/autocast.h"
#include "model/contrastive_loss.h"
#include "model/flops_device.h"
#include "model/rng_state.h"
#include "train/torch/param_setup.h"

namespace bt::train {

namespace {

// The contrastive loss over these embeddings: this rank's rows, or (--gather_embeddings) every rank's, gathered
// with gradient so the same loss is computed on every rank.
torch::Tensor loss_of(TrainRun& r, const torch::Tensor& text, const torch::Tensor& image, const torch::Tensor& cross) {
  const double e = r.o.label_smoothing;
  if (!r.o.gather_embeddings) return model::contrastive_loss(text, image, cross, r.model->logit_scale, e);
  auto all = [&](const torch::Tensor& t) { return dist::gather_with_grad(*r.group, t); };
  return model::contrastive_loss(all(text), all(image), all(cross), r.model->logit_scale, e);
}

feed::ModelBatch next_batch(TrainRun& r, feed::BatchProvider& batches, StepResult& s) {
  double wait = 0;
  std::optional<feed::ModelBatch> mb = batches.next(&wait);  // inputs on the device
  if (!mb) fail("loader ended the epoch early (internal error)");
  s.data_wait_s += wait;
  s.samples += mb->size;
  if (mb->host) s.skipped_rows += static_cast<int64_t>(mb->host->skipped);  // counted as trained on, not read ahead
  // Model FLOPs, once per micro-batch (exact accumulation's second forward is recomputation, not counted).
  const int64_t len = mb->input_ids.size(1);
  r.flops += model::train_flops(r.cfg, len, mb->text_lengths.empty() ? std::vector<int32_t>(size_t(mb->size), int32_t(len))
                                                                     : mb->text_lengths);
  return std::move(*mb);
}

void prefetch(feed::BatchProvider& batches, StepResult& s) {
  double wait = 0;
  batches.prefetch(&wait);  // on a GPU the step's kernels still run: prepare the next batch meanwhile
  s.data_wait_s += wait;
}

// The factor the loss is multiplied by before backward (the fp16 loss scale; 1 otherwise).
double loss_scale_of(const TrainRun& r) { return r.loss_scale ? r.loss_scale->scale() : 1.0; }

// --fp16: divides the gradients by the loss scale and says whether any is inf/NaN on any rank (the step is then
// skipped). The test hook puts a NaN into one gradient first.
bool unscale_finds_nonfinite(TrainRun& r) {
  const double inv = 1.0 / r.loss_scale->scale();
  torch::Tensor bad;  // on the gradients' device: one read back per step, not one per parameter
  bool inject = r.hooks.inject_nonfinite_at_step == r.st.global_step + 1;
  for (torch::Tensor& p : r.params) {
    torch::Tensor g = p.grad();
    if (!g.defined()) continue;
    if (inject) g.view(-1)[0] = std::nan(""), inject = false;
    g.mul_(inv);
    torch::Tensor here = g.isfinite().logical_not().any();
    bad = bad.defined() ? bad.logical_or(here) : here;
  }
  const bool local = bad.defined() && bad.item<bool>();
  return r.group->all_reduce_mean(local ? 1.0 : 0.0) > 0;
}

// HF's accumulation: each micro-batch's loss over its own rows, averaged.
void accumulate_local(TrainRun& r, feed::BatchProvider& batches, StepResult& s) {
  const int accum = r.o.gradient_accumulation_steps;
  for (int a = 0; a < accum; ++a) {
    const feed::ModelBatch mb = next_batch(r, batches, s);
    torch::Tensor loss;
    {
      kernels::AutocastScope autocast(r.s.bf16 || r.s.fp16, r.device, r.s.fp16 ? at::kHalf : at::kBFloat16);
      auto fwd = r.model->forward(mb.pixels, mb.input_ids, mb.attention_mask, /*return_loss=*/false);
      loss = loss_of(r, fwd.text_embeds, fwd.image_embeds, fwd.cross_embeds);  // the model's loss, with the options
    }
    if (a == accum - 1) r.sync->arm();  // this backward also all-reduces the gradients, bucket by bucket
    (loss * (loss_scale_of(r) / static_cast<double>(accum))).backward();
    prefetch(batches, s);
    s.loss += loss.detach().item<double>() / accum;  // waits for the step's kernels
  }
}

// GradCache: the K micro-batches' embeddings without autograd, the loss over all of them and its gradient with
// respect to them, then each micro-batch again with autograd, backpropagating that gradient.
void accumulate_exact(TrainRun& r, feed::BatchProvider& batches, StepResult& s) {
  const int accum = r.o.gradient_accumulation_steps;
  std::vector<feed::ModelBatch> mbs;
  std::vector<model::RngState> rng;
  std::vector<torch::Tensor> text, image, cross;
  {
    torch::NoGradGuard no_grad;
    for (int a = 0; a < accum; ++a) {
      mbs.push_back(next_batch(r, batches, s));
      rng.push_back(model::RngState::save(r.device));
      kernels::AutocastScope autocast(r.s.bf16 || r.s.fp16, r.device, r.s.fp16 ? at::kHalf : at::kBFloat16);
      auto fwd = r.model->forward(mbs.back().pixels, mbs.back().input_ids, mbs.back().attention_mask, false);
      text.push_back(fwd.text_embeds), image.push_back(fwd.image_embeds), cross.push_back(fwd.cross_embeds);
      prefetch(batches, s);
    }
  }
  const model::RngState after = model::RngState::save(r.device);  // where a single K x B forward would have left the generators
  auto leaf = [](const std::vector<torch::Tensor>& parts) { return torch::cat(parts).detach().requires_grad_(true); };
  torch::Tensor t = leaf(text), i = leaf(image), c = leaf(cross);
  torch::Tensor loss;
  {
    kernels::AutocastScope autocast(r.s.bf16 || r.s.fp16, r.device, r.s.fp16 ? at::kHalf : at::kBFloat16);
    loss = loss_of(r, t, i, c);
  }
  (loss * loss_scale_of(r)).backward();  // gradients of t, i, c, and logit_scale's own (scaled under --fp16)
  std::vector<int64_t> sizes;
  for (const feed::ModelBatch& mb : mbs) sizes.push_back(mb.size);
  const auto gt = t.grad().split_with_sizes(sizes), gi = i.grad().split_with_sizes(sizes),
             gc = c.grad().split_with_sizes(sizes);
  torch::Tensor replay = torch::zeros({}, t.options().requires_grad(false));
  for (int a = 0; a < accum; ++a) {
    rng[size_t(a)].restore();  // the dropout masks of pass 1
    torch::Tensor surrogate;
    {
      kernels::AutocastScope autocast(r.s.bf16 || r.s.fp16, r.device, r.s.fp16 ? at::kHalf : at::kBFloat16);
      auto fwd = r.model->forward(mbs[size_t(a)].pixels, mbs[size_t(a)].input_ids, mbs[size_t(a)].attention_mask, false);
      surrogate = (fwd.text_embeds.to(torch::kFloat) * gt[a]).sum() + (fwd.image_embeds.to(torch::kFloat) * gi[a]).sum() +
                  (fwd.cross_embeds.to(torch::kFloat) * gc[a]).sum();
      const size_t k = size_t(a);
      for (auto [now, then] : {std::pair{fwd.text_embeds, text[k]}, {fwd.image_embeds, image[k]}, {fwd.cross_embeds, cross[k]}})
        replay = torch::maximum(replay, (now.detach() - then).abs().max().to(replay.dtype()));
    }
    if (a == accum - 1) r.sync->arm();
    surrogate.backward();
  }
  after.restore();
  s.loss = loss.detach().item<double>();
  s.replay_max_diff = replay.item<double>();
}

}  // namespace

StepResult train_step(TrainRun& r, feed::BatchProvider& batches) {
  const ProfiledStep profiled(r.profiler.get(), r.st.global_step + 1);  // --profile_steps: the whole step, update too
  StepResult s;
  const bool exact = r.o.contrastive_accumulation == ContrastiveAccumulation::kExact;
  if (r.o.gradient_accumulation_steps > 1 && exact) accumulate_exact(r, batches, s);
  else accumulate_local(r, batches, s);
  r.sync->finish();
  s.loss = r.group->all_reduce_mean(s.loss);
  if (r.loss_scale && !r.loss_scale->update(unscale_finds_nonfinite(r))) {
    s.skipped = true;  // GradScaler: no update from inf/NaN gradients; the scale has halved
    s.grad_norm = 0;  // not measured: the trainer keeps logging the last real one
    r.opt->zero_grad();
    return s;
  }
  // The test hook without a loss scaler: step N's gradients get a NaN, for the divergence guard to catch.
  if (!r.loss_scale && r.hooks.inject_nonfinite_at_step == r.st.global_step + 1)
    for (torch::Tensor& p : r.params)
      if (p.grad().defined()) {
        p.grad().view(-1)[0] = std::nan("");
        break;
      }
  s.grad_norm = clip_grad_norm(r.params, r.o.max_grad_norm);
  // Divergence: a NaN/inf loss or gradient never reaches the weights (every rank sees the same all-reduced loss
  // and, after the gradient all-reduce, the same norm, so every rank skips alike).
  if (!std::isfinite(s.loss) || !std::isfinite(s.grad_norm)) {
    s.skipped = s.nonfinite = true;
    r.opt->zero_grad();
    return s;
  }
  r.opt->step(r.s.learning_rate * r.plan.schedule.lr_factor(r.st.global_step));
  bound_logit_scale(r.model, r.o);
  r.opt->zero_grad();
  return s;
}

model::StepFlops all_ranks_flops(TrainRun& r) {
  model::StepFlops all = r.flops;
  if (r.group->distributed())
    for (double* v : {&all.model, &all.padding, &all.text_tokens, &all.samples})
      *v = r.group->all_reduce_mean(*v) * r.o.world_size;
  return all;
}

nlohmann::json work_results(const TrainRun& r, const model::StepFlops& all, double samples_per_s) {
  nlohmann::json j = model::work_json(r.cfg, all);
  const double per_device = j["model_flops_per_sample"].get<double>() * samples_per_s / r.o.world_size;
  const model::MatmulPrecision precision = model::run_precision(r.device, r.s.bf16, r.s.fp16);
  j.update(model::utilization_json(per_device, model::device_peak_flops(r.device, precision)));
  return j;
}

}  // namespace bt::train
