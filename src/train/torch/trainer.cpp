// The training loop of `bridgetune train` (contract in train/trainer.h): setup (train_setup.cpp), then one
// training step (train_step, in contrastive_step.cpp) repeated by the loop, which logs, evaluates, checkpoints and
// measures throughput around it, and at the end writes the run's outputs.
#include "train/trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <csignal>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>

#include "common/error.h"
#include "eval/torch/embed_eval.h"
#include "feed/torch/batch_provider.h"
#include "kernels/cuda_ops.h"
#include "kernels/gemm/gemm.h"
#include "kernels/registry.h"
#include "model/attention_select.h"
#include "model/device.h"
#include "model/flops.h"
#include "report/progress.h"
#include "report/run_log.h"
#include "report/train_report.h"
#include "train/checkpoint_dir.h"
#include "train/stop_signal.h"
#include "train/throughput.h"
#include "train/torch/contrastive_step.h"
#include "train/torch/demo_scores.h"
#include "train/torch/param_setup.h"
#include "train/torch/stream_train.h"
#include "train/torch/train_setup.h"

namespace bt::train {

namespace fs = std::filesystem;

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The loop around train_step: epochs of the batch provider, the step's bookkeeping, logging windows
// (metrics.jsonl, console), evaluation, checkpoints, throughput, and the run's outputs at the end.
class TrainLoop {
 public:
  explicit TrainLoop(TrainRun& r);
  TrainSummary run();

 private:
  void run_epoch();
  void after_step(const StepResult& s);
  void count_nonfinite(const StepResult& s);
  bool diverged() const;
  void check_stop_signal();
  [[noreturn]] void stop_on_signal() const;
  [[noreturn]] void stop_diverged() const;
  void flush_window();
  void run_eval(bool select = true);
  nlohmann::json eval_metrics();
  void share_early_stop();
  void load_best_model();
  void save();
  void say(const std::string& line) {
    if (r_.talk) bar_.log(line);
  }
  TrainSummary finish();
  nlohmann::json results_json(const TrainSummary& sum, const RunStats& rs) const;
  void print_results(const nlohmann::json& results) const;

  TrainRun& r_;
  const TrainOptions& o_;  // as the user gave it
  const RunSettings& s_;   // what the run uses
  std::optional<report::MetricsLog> metrics_;
  report::ProgressBar bar_;
  bool tty_;
  std::unique_ptr<feed::BatchProvider> batches_;
  ThroughputMeter meter_;
  double t_start_ = 0;
  uint64_t loop_start_memory_ = 0;
  double window_loss_sum_ = 0, last_grad_norm_ = 0, first_loss_ = NAN, replay_max_diff_ = -1;
  int64_t window_steps_ = 0;
  eval::SplitEval last_eval_;
  bool evaluated_ = false, stopped_early_ = false;
  // Model selection (train/model_selection.h): the best evaluation so far, and early stopping (early_stop_:
  // the run ends normally, with its final outputs; stopped_early_ is the test hook's "as if killed").
  ModelSelector selector_;
  bool early_stop_ = false, loaded_best_ = false;
  // Divergence guard: steps skipped for a NaN/inf loss or gradient norm, in all and in a row.
  int64_t nonfinite_steps_ = 0, nonfinite_in_a_row_ = 0;
  double last_nonfinite_loss_ = 0;
  // Preemption (train/stop_signal.h): the signal that asked this run to stop, once every rank has seen it.
  int stop_signal_ = 0;
  // --on_bad_sample skip: the samples every rank skipped, and this rank's first reasons (train_results.json);
  // skipped_before_: those of the runs this one resumed (the checkpoint's count); skipped_here_: this rank's, in
  // the batches it trained on (the loader's own count includes batches read ahead).
  int64_t skipped_samples_ = 0, skipped_before_ = 0, skipped_here_ = 0;
  int64_t all_ranks_skipped() const;  // collective
  int64_t all_ranks_sum(int64_t local) const;  // collective
  // Images the train loader decoded although their decoder warned (LoaderStats::decoded_with_warnings), every rank's.
  int64_t decoded_with_warnings_ = 0;
  int64_t resumed_step_ = 0;  // the step this process started from (a resume's checkpoint)
  double text_tokens_before_ = 0;  // every rank's input_ids before the resume (total_flos)
  std::vector<std::string> first_skipped_;
  DemoScores demo_;  // the built-in demo's held-out scores before and after (none for other runs)
};

TrainLoop::TrainLoop(TrainRun& r)
    : r_(r),
      o_(r.o),
      s_(r.s),
      bar_(r.plan.total_steps, r.st.global_step, stdout, r.talk && report::ProgressBar::stdout_is_tty()),
      tty_(r.talk && report::ProgressBar::stdout_is_tty()),
      meter_(r.o.throughput_warmup_steps),
      selector_(r.selection) {
  selector_.restore(r_.st.selection);
  early_stop_ = selector_.should_stop();
  skipped_before_ = r_.st.skipped_samples;
  text_tokens_before_ = r_.st.text_tokens;
  resumed_step_ = r_.st.global_step;
  if (r_.main_rank) metrics_.emplace(r_.out / "metrics.jsonl", !r_.resume_dir.empty(), r_.st.global_step);
  if (r_.main_rank) metrics_->add_integrations(s_.tensorboard_dir);  // --report_to: TensorBoard, MLflow
  // Streamed shards have no known row count: the dataset's size is the samples the run reads (steps x batch).
  say(str("training ", r_.cfg.text.hidden_size, "-wide BridgeTower (", r_.model->count_parameters(true),
          " trainable parameters) on ", streamed_train(r_) ? str("streamed shards (", r_.train_ds->size(),
          " samples over the run)") : str(r_.train_ds->size(), " rows"), ": ", r_.plan.total_steps, " steps of ",
          r_.batch() * o_.gradient_accumulation_steps * o_.world_size, " samples, ", o_.dataloader_num_workers,
          " loader workers, device ", r_.device.str(),
          r_.device.is_cpu() ? str(" (", r_.torch_threads, " torch threads)") : ""));
  if (o_.gradient_accumulation_steps > 1)
    say(o_.contrastive_accumulation == ContrastiveAccumulation::kExact
            ? str("gradient accumulation: exact: each step's ", o_.gradient_accumulation_steps, " micro-batches of ",
                  r_.batch(), " train as one batch of ", r_.batch() * o_.gradient_accumulation_steps,
                  " (one loss over all of them; --contrastive_accumulation local for HF's per-micro-batch losses)")
            : str("gradient accumulation: local (HF): each micro-batch of ", r_.batch(), " has its own negatives"));
  feed::ProviderOptions po;
  po.max_seq_length = r_.max_seq_length();
  po.device = r_.device;
  po.background = o_.dataloader_num_workers > 0;
  po.in_memory_batches = r_.hooks.in_memory_batches;
  po.media_pipeline = s_.use_media_pipeline;
  po.image_size = r_.image_size();
  po.bf16 = s_.bf16;
  batches_ = feed::make_batch_provider(*r_.train_loader, *r_.tok, po, r_.plan.batches_per_epoch);  // in-memory: made here
  t_start_ = now_s();
  meter_.start(t_start_);
  if (auto line = demo_.measure_before(r_)) say(*line);
  loop_start_memory_ = model::memory_bytes(r_.device);  // what the steps add is measured from here
  model::reset_peak_memory(r_.device);
}

TrainSummary TrainLoop::run() {
  arm_stop_signals();  // from here a stop signal saves the step it ends (before: nothing to save, stops at once)
  while (r_.st.global_step < r_.plan.total_steps && !stopped_early_ && !early_stop_ && !diverged() && !stop_signal_)
    run_epoch();
  batches_->stop();
  if (r_.talk) bar_.finish();
  if (diverged()) stop_diverged();
  if (stop_signal_) stop_on_signal();
  return finish();
}

// The steps of one epoch from where the state is (a resumed run starts mid-epoch).
void TrainLoop::run_epoch() {
  const int64_t step = r_.st.global_step, per_epoch = r_.plan.steps_per_epoch;
  const size_t first_batch = static_cast<size_t>(step % per_epoch) * o_.gradient_accumulation_steps;
  const size_t epoch_batches = static_cast<size_t>(per_epoch) * o_.gradient_accumulation_steps;
  const uint64_t epoch = static_cast<uint64_t>(step / per_epoch);
  if (r_.global_view) r_.global_view->set_epoch(epoch);
  batches_->start(epoch, first_batch, epoch_batches - first_batch);
  do {
    after_step(train_step(r_, *batches_));
  } while (!stopped_early_ && !early_stop_ && !diverged() && !stop_signal_ &&
           r_.st.global_step < r_.plan.total_steps && r_.st.global_step % per_epoch != 0);
}

void TrainLoop::after_step(const StepResult& s) {
  TrainerState& st = r_.st;
  streamed_step_done(r_, ++st.global_step);  // streamed shards: frees the step's samples, keeps the stream position
  skipped_here_ += s.skipped_rows;
  const int64_t per_epoch = r_.plan.steps_per_epoch;
  st.epoch = static_cast<uint64_t>(st.global_step / per_epoch);
  st.batch_in_epoch = static_cast<size_t>(st.global_step % per_epoch) * o_.gradient_accumulation_steps;
  count_nonfinite(s);
  if (s.nonfinite && diverged()) return;  // no checkpoint of this step: the run stops on the last good one
  if (!s.nonfinite) {  // the averages (and every JSON file) see finite losses only
    st.loss_sum += s.loss;
    ++st.loss_steps;
    if (std::isnan(first_loss_)) first_loss_ = s.loss;
    window_loss_sum_ += s.loss;
    ++window_steps_;
  }
  if (!s.skipped) last_grad_norm_ = s.grad_norm;
  replay_max_diff_ = std::max(replay_max_diff_, s.replay_max_diff);
  if (r_.loss_scale) {
    st.loss_scale = r_.loss_scale->to_json();  // checkpoints carry it (exact resume)
    if (s.skipped)
      say(str("step ", st.global_step, ": inf/NaN gradients, no update (fp16 loss scale now ",
              fmt("%g", r_.loss_scale->scale()), ")"));
  }
  meter_.step(now_s(), s.samples * o_.world_size, s.data_wait_s, s.loss);
  if (st.global_step % s_.logging_steps == 0 || st.global_step == r_.plan.total_steps) flush_window();
  if (tty_)
    bar_.update(st.global_step, now_s() - t_start_,
                str("loss ", fmt("%.3f", s.loss), " ",
                    lr_text(o_, s_, s_.learning_rate * r_.plan.schedule.lr_factor(st.global_step))));
  if (r_.plan.eval_steps > 0 && st.global_step % r_.plan.eval_steps == 0) {
    run_eval();
    share_early_stop();
  }
  // A step whose loss was not finite saves no checkpoint: the newest one stays one of a finite step.
  const bool saved = !s.nonfinite && r_.plan.save_steps > 0 && st.global_step % r_.plan.save_steps == 0;
  if (saved) save();
  if (r_.hooks.stop_after_step > 0 && st.global_step == r_.hooks.stop_after_step) stopped_early_ = true;
  check_stop_signal();
  if (stop_signal_ && !saved) save();  // the step just finished is the checkpoint a requeued run resumes from
}

// Between steps: whether a stop signal reached this process (or, under data parallel, any rank: all stop at the
// same step, so their checkpoint is one).
void TrainLoop::check_stop_signal() {
  int sig = stop_signal_received();
  if (r_.group->distributed()) {
    const bool any = r_.group->all_reduce_mean(sig ? 1.0 : 0.0) > 0;
    if (any && !sig) sig = SIGTERM;  // another rank's
  }
  stop_signal_ = sig;
}

// One line: what was saved and how to go on; the exit status says which signal (bt::StopRequested).
void TrainLoop::stop_on_signal() const {
  const fs::path ck = r_.out / ("checkpoint-" + std::to_string(r_.st.global_step));
  throw StopRequested(str("stopped by ", signal_name(stop_signal_), " after step ", r_.st.global_step, " of ",
                          r_.plan.total_steps, ": saved ", ck.string(), "; to continue, run the same command with "
                          "--resume_from_checkpoint latest (or latest_or_none in a requeue script)"),
                      128 + stop_signal_);
}

void TrainLoop::count_nonfinite(const StepResult& s) {
  if (!s.nonfinite) {
    nonfinite_in_a_row_ = 0;
    return;
  }
  ++nonfinite_steps_, ++nonfinite_in_a_row_;
  last_nonfinite_loss_ = s.loss;
  say(str("step ", r_.st.global_step, ": loss ", fmt("%g", s.loss), ", gradient norm ", fmt("%g", s.grad_norm),
          ": not finite, skipped (the weights are unchanged; ", nonfinite_in_a_row_, " in a row, the run stops at ",
          o_.max_nonfinite_steps, ")"));
}

bool TrainLoop::diverged() const { return nonfinite_in_a_row_ >= o_.max_nonfinite_steps; }

// One line: the step, the last good checkpoint and the likely cause. Nothing of the diverged steps was applied or
// saved, so every checkpoint and the weights stay finite; no final model is written.
void TrainLoop::stop_diverged() const {
  const std::vector<CheckpointRef> cks = list_checkpoints(r_.out);
  double largest = 0;  // a checkpoint can hold finite weights that have already blown up
  for (const auto& p : r_.model->parameters()) largest = std::max(largest, p.detach().abs().max().item<double>());
  const bool from_the_resume = !r_.resume_dir.empty() && r_.st.global_step - nonfinite_in_a_row_ == resumed_step_;
  const std::string cause =
      from_the_resume ? str("the checkpoint resumed, ", r_.resume_dir.string(), ", diverged already (it failed from "
                            "its first step on; its weights reach ", fmt("%g", largest), "): resume an older one")
                      : str("--learning_rate ", fmt("%g", s_.learning_rate), " is too high for this model (lower it, "
                            "or warm up with --warmup_ratio; the weights reach ", fmt("%g", largest), ")");
  fail("training diverged: ", nonfinite_in_a_row_, " steps in a row up to step ", r_.st.global_step,
       " had a non-finite loss or gradient norm (last loss ", fmt("%g", last_nonfinite_loss_), "); none was applied. ",
       cks.empty() ? std::string("No checkpoint was saved")
                   : str("The newest checkpoint (of a step with a finite loss): ", cks.back().path.string()),
       ". Likely cause: ", cause);
}

void TrainLoop::flush_window() {
  if (window_steps_ == 0) return;
  WindowStats w = meter_.take_window(now_s());
  report::WindowRecord rec;
  rec.step = r_.st.global_step;
  rec.epoch = log_epoch(r_);  // streamed shards: the stream's epoch
  rec.loss = window_loss_sum_ / static_cast<double>(window_steps_);
  rec.lr = s_.learning_rate * r_.plan.schedule.lr_factor(r_.st.global_step);
  rec.samples_per_s = w.samples_per_s;
  rec.data_wait_percent = w.data_wait_percent;
  rec.grad_norm = last_grad_norm_;
  rec.skipped_samples = skipped_before_ + skipped_here_;
  rec.nonfinite_steps = nonfinite_steps_;
  for (const auto& [key, factor] : part_lr_factors(o_, s_)) rec.scalars.emplace_back(key, rec.lr * factor);
  rec.scalars.emplace_back("logit_scale", r_.model->logit_scale.item<double>());
  r_.st.last_window_loss = rec.loss;
  window_loss_sum_ = 0;
  window_steps_ = 0;
  if (r_.main_rank) metrics_->write(rec);
  // Streamed shards before the stream passed an epoch's end: the epoch's length is not known, only the samples read.
  const std::string epoch = streamed_train(r_) && r_.stream_epoch_samples == 0
      ? str(fmt("%.0f", rec.epoch), " (its length not known yet: ", r_.st.global_step * r_.batch() *
            o_.gradient_accumulation_steps, " samples read)")
      : fmt("%.2f", rec.epoch);
  say(str("step ", rec.step, "/", r_.plan.total_steps, " | loss ", fmt("%.4f", rec.loss), " | ", lr_text(o_, s_, rec.lr),
          " | ", fmt("%.1f", rec.samples_per_s), " samples/s | data wait ", fmt("%.1f", rec.data_wait_percent),
          "% | epoch ", epoch,
          rec.skipped_samples ? str(" | ", rec.skipped_samples, " bad samples skipped") : std::string(),
          rec.nonfinite_steps ? str(" | ", rec.nonfinite_steps, " non-finite steps skipped") : std::string()));
}

// One evaluation during training: the contrastive loss and recall, and with matching data the matching accuracy;
// a run-log record (metrics.jsonl -> log_history, TensorBoard), a console line, and model selection's input.
void TrainLoop::run_eval(bool select) {
  if (!r_.val_loader || !r_.main_rank) return;  // eval has no collectives: only rank 0 spends the time
  meter_.pause(now_s());
  const nlohmann::json metrics = eval_metrics();
  evaluated_ = true;
  meter_.resume(now_s());
  nlohmann::json rec = metrics;
  rec["step"] = r_.st.global_step;
  metrics_->write(rec);
  const auto& r = last_eval_.retrieval.scores;
  const auto& m = last_eval_.matching;
  say(str("eval @ step ", r_.st.global_step, ": loss ", fmt("%.4f", last_eval_.retrieval.loss), " | image->text R@1/5/10 ",
          fmt("%.3f", r.i2t_r1), "/", fmt("%.3f", r.i2t_r5), "/", fmt("%.3f", r.i2t_r10), " | text->image ",
          fmt("%.3f", r.t2i_r1), "/", fmt("%.3f", r.t2i_r5), "/", fmt("%.3f", r.t2i_r10),
          m ? str(" | matching accuracy ", fmt("%.3f", m->scores.accuracy), " (chance ", fmt("%.3f", m->scores.chance), ")")
            : std::string()));
  if (!select) return;  // the end-of-run evaluation is reported, not selected on (HF: checkpoints only)
  if (selector_.observe(metrics, r_.st.global_step))
    say(str("new best ", selector_.selection().metric, " ", fmt("%.6g", *selector_.best_metric()), " at step ",
            r_.st.global_step));
  r_.st.selection = selector_.to_json();  // the next checkpoint carries it (exact resume)
}

// The one evaluation path (eval/torch/embed_eval.h): the validation loader feeds the forward (loss, recall) and the
// split's matching questions, when it has them, are scored from embeddings.
nlohmann::json TrainLoop::eval_metrics() {
  last_eval_ = eval::evaluate_split(r_.model, *r_.tok, r_.val_ds, *r_.val_loader,
                                    r_.val_matching ? &r_.val_matching->set : nullptr,
                                    embed_options(o_, s_, r_.cfg, r_.device));
  return eval::to_json(last_eval_, "eval");
}

// Early stopping is decided on rank 0 (the only one that evaluates); every rank must stop at the same step.
void TrainLoop::share_early_stop() {
  if (selector_.selection().patience <= 0) return;
  const bool stop = r_.main_rank && selector_.should_stop();
  early_stop_ = r_.group->all_reduce_mean(stop ? 1.0 : 0.0) > 0;
  if (early_stop_) say(selector_.stop_reason());
}

// --load_best_model_at_end: the best checkpoint's weights become the model that is saved and evaluated last.
void TrainLoop::load_best_model() {
  const int64_t best = selector_.best_step();
  if (!selector_.selection().load_best_at_end || best < 0 || best == r_.st.global_step) return;
  const fs::path dir = r_.out / ("checkpoint-" + std::to_string(best));
  r_.model->load_weights(dir.string());
  r_.model->to(r_.device);
  loaded_best_ = true;
  say(str("loaded the best model (", selector_.selection().metric, " ", fmt("%.6g", *selector_.best_metric()),
          " at step ", best, ") from ", dir.string()));
}

// Samples skipped by every rank's loader (each reads its share of the rows), with the resumed runs'.
int64_t TrainLoop::all_ranks_sum(int64_t local) const {
  const double x = static_cast<double>(local);
  return std::llround(r_.group->distributed() ? r_.group->all_reduce_mean(x) * o_.world_size : x);
}

int64_t TrainLoop::all_ranks_skipped() const { return skipped_before_ + all_ranks_sum(skipped_here_); }

void TrainLoop::save() {
  meter_.pause(now_s());
  r_.st.skipped_samples = all_ranks_skipped();  // every rank is here: a resumed run counts on from it
  r_.st.text_tokens = text_tokens_before_ + all_ranks_flops(r_).text_tokens;  // collective, likewise
  if (r_.main_rank) {
    save_checkpoint(r_.out, r_.model, *r_.tok, *r_.opt, r_.plan.schedule, r_.st);
    rotate_checkpoints(r_.out, o_.save_total_limit, selector_.best_step());
  }
  r_.group->barrier();  // no rank runs ahead (or exits) before the checkpoint is complete
  meter_.resume(now_s());
}

// The summary with train_results.json's keys (the recipe writes the file), and on rank 0 the final model and the
// plot. A run stopped early (stop_after_step) ends as if killed: no final outputs.
TrainSummary TrainLoop::finish() {
  const TrainerState& st = r_.st;
  TrainSummary sum;
  sum.output_dir = o_.output_dir;
  sum.global_step = st.global_step;
  sum.max_steps = r_.plan.total_steps, sum.steps_per_epoch = r_.plan.steps_per_epoch;
  sum.eval_steps = r_.plan.eval_steps, sum.save_steps = r_.plan.save_steps;
  if (stopped_early_) return sum;  // as if killed: no final outputs
  sum.completed = true;
  flush_window();
  const RunStats rs = meter_.finish(now_s());
  sum.peak_memory_bytes = model::peak_memory_bytes(r_.device);  // before the final evaluation and saving
  sum.step_memory_bytes = sum.peak_memory_bytes > loop_start_memory_ ? sum.peak_memory_bytes - loop_start_memory_ : 0;
  if (r_.main_rank) load_best_model();
  const bool last_step_evaluated = evaluated_ && r_.plan.eval_steps > 0 && st.global_step % r_.plan.eval_steps == 0;
  if (s_.eval_at_end && (!last_step_evaluated || loaded_best_)) run_eval(/*select=*/false);
  demo_.measure_after(r_);

  sum.train_samples_per_second = rs.train_samples_per_second;
  sum.train_runtime = rs.train_runtime;
  sum.train_samples = rs.train_samples;
  sum.train_loss = st.loss_steps ? st.loss_sum / static_cast<double>(st.loss_steps) : 0;
  sum.final_loss = st.last_window_loss;
  sum.first_loss = first_loss_;
  sum.data_wait_percent = rs.data_wait_percent;
  sum.op_paths = str("adamw ", r_.kernel_paths->name(kernels::Kernel::kAdamW),
                     r_.device.is_cuda() || kernels::fused_ops_fail_injected()
                         ? str(", quick_gelu ", r_.kernel_paths->name(kernels::Kernel::kQuickGelu)) : std::string(),
                     r_.device.is_cpu() && s_.bf16 ? str(", bf16 gemm ", kernels::cpu_bf16_gemm_name()) : std::string(),
                     ", ", model::attention_paths(r_.device, s_.fp16 ? torch::kHalf : s_.bf16 ? torch::kBFloat16 : torch::kFloat, r_.cfg, true));
  if (evaluated_) sum.eval_loss = last_eval_.retrieval.loss;
  if (selector_.best_metric()) sum.best_metric = *selector_.best_metric();
  const fs::path best_dir = r_.out / ("checkpoint-" + std::to_string(selector_.best_step()));
  std::error_code ec;
  if (selector_.best_step() >= 0 && fs::is_directory(best_dir, ec)) sum.best_model_checkpoint = best_dir.string();
  if (early_stop_) sum.early_stop_reason = selector_.stop_reason();
  skipped_samples_ = all_ranks_skipped();  // and the first reasons of ours
  first_skipped_ = r_.train_loader->stats().first_skipped;
  decoded_with_warnings_ = all_ranks_sum(static_cast<int64_t>(r_.train_loader->stats().decoded_with_warnings));
  const model::StepFlops work = all_ranks_flops(r_);  // collective: before rank 0 goes on alone
  if (!r_.main_rank) return sum;

  if (r_.hooks.save_final_model) save_final_model(r_.out, r_.model, *r_.tok, o_.merge_lora);
  if (r_.hooks.write_plot)
    report::write_training_plot(r_.out / "metrics.jsonl", r_.out / "training_plot.png",
                                str("bridgetune train: ", r_.model_dir.empty() ? o_.model_preset : r_.model_dir));
  sum.results = results_json(sum, rs);
  sum.results.update(work_results(r_, work, sum.train_samples_per_second));  // total_flos, tflops_per_s, mfu, ...
  // HF's total_flos is the whole run's, the steps before a resume included (as train_loss); the rates are this run's.
  sum.results["total_flos"] = model::hf_total_flos(r_.cfg, text_tokens_before_ + work.text_tokens);
  if (r_.talk) print_results(sum.results);
  return sum;
}

nlohmann::json TrainLoop::results_json(const TrainSummary& sum, const RunStats& rs) const {
  nlohmann::json results = {{"train_samples_per_second", sum.train_samples_per_second},
                            {"train_runtime", sum.train_runtime},
                            {"train_samples", sum.train_samples},
                            {"train_loss", sum.train_loss},
                            {"final_loss", sum.final_loss},
                            {"data_wait_percent", sum.data_wait_percent},
                            {"world_size", o_.world_size},
                            {"global_step", r_.st.global_step},
                            {"throughput_warmup_steps", o_.throughput_warmup_steps},
                            {"measured_steps", rs.measured_steps},
                            {"per_device_train_batch_size", r_.batch()},
                            {"dataloader_num_workers", o_.dataloader_num_workers},
                            {"device", r_.device.str()},
                            {"op_paths", sum.op_paths},  // the kernels this run took (bench rows' paths)
                            {"peak_memory_mb", static_cast<double>(sum.peak_memory_bytes) / (1 << 20)},
                            {"step_memory_mb", static_cast<double>(sum.step_memory_bytes) / (1 << 20)},
                            {"bf16", s_.bf16}};
  if (evaluated_) {  // the last evaluation's loss, recall and matching accuracy (the rest is in metrics.jsonl)
    results.update(eval::to_json(last_eval_, "eval"));
    results.erase("eval_samples");
    results.erase("eval_matching_chance");
  }
  if (replay_max_diff_ >= 0) results["accumulation_replay_max_diff"] = replay_max_diff_;
  results["skipped_samples"] = skipped_samples_;  // --on_bad_sample skip: every rank's
  if (!first_skipped_.empty()) results["first_skipped_samples"] = first_skipped_;
  // JPEGs with libjpeg's "Corrupt JPEG data: ..." warnings, decoded as Pillow decodes them (media/decode.h).
  results["images_decoded_with_warnings"] = decoded_with_warnings_;
  if (r_.train_loader->options().ship_device_jpegs)  // --use_media_pipeline with nvJPEG: what the CPU decoded instead
    results["media_pipeline_cpu_decoded_images"] = r_.train_loader->stats().cpu_decoded;
  if (nonfinite_steps_ > 0) results["nonfinite_steps"] = nonfinite_steps_;
  if (r_.loss_scale) {
    results["loss_scale"] = r_.loss_scale->scale();
    results["skipped_steps"] = r_.loss_scale->skipped_steps();
  }
  if (selector_.selection().active()) {
    results["metric_for_best_model"] = selector_.selection().metric;
    results["best_metric"] = sum.best_metric;
    results["best_model_checkpoint"] = sum.best_model_checkpoint.empty() ? nlohmann::json(nullptr)
                                                                          : nlohmann::json(sum.best_model_checkpoint);
    results["loaded_best_model_at_end"] = loaded_best_;
  }
  if (!sum.early_stop_reason.empty()) results["early_stopping"] = sum.early_stop_reason;
  demo_.add_to(results);
  return results;
}

void TrainLoop::print_results(const nlohmann::json& results) const {
  report::TrainReport rep{results, {}, 0, r_.out, r_.hooks.write_plot, r_.hooks.save_final_model, {}};
  demo_.add_to(rep);
  if (auto cks = list_checkpoints(r_.out); !cks.empty()) rep.latest_checkpoint = cks.back().path.string();
  report::print_train_report(rep);
}

}  // namespace

TrainSummary run_train(const TrainOptions& options, const RunSettings& settings, const TrainHooks& hooks) {
  std::unique_ptr<TrainRun> run = setup_run(options, settings, hooks);
  const kernels::ScopedKernelPaths record(run->kernel_paths.get());  // the model's ops write to this run's record
  return TrainLoop(*run).run();
}

TrainSummary run_train(const TrainOptions& options, const TrainHooks& hooks, const TrainInputs& inputs) {
  return run_train(options, resolve_settings(options, inputs), hooks);
}

}  // namespace bt::train
