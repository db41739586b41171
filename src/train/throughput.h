// Throughput and data-wait accounting of a training run, as the Hugging Face / optimum-habana Trainer reports it.
// Time comes in from the caller (seconds on any monotonic clock), so the arithmetic is testable without sleeping.
//
// Run totals (HF `speed_metrics` with throughput_warmup_steps):
//   train_runtime            = end - start (everything, warm-up included)
//   train_samples_per_second = samples of the steps after the first `warmup_steps` steps
//                              / (end - time at which the warm-up steps had finished)
//   If the run has no more steps than the warm-up, nothing can be excluded and the whole run is used.
//   data_wait_percent        = time spent waiting for batches / wall time, over the same post-warm-up span.
// Logging windows: mean loss of the window's steps, window samples / window wall time, window wait / wall time.
// Time marked with pause()/resume() (eval, checkpoint writes) is excluded from throughput and wait figures
// but stays in train_runtime, so the throughput measures the training loop alone.
#pragma once
#include <cstdint>

namespace bt::train {

struct WindowStats {
  int64_t steps = 0;
  double mean_loss = 0;
  double samples_per_s = 0;
  double data_wait_percent = 0;
  double seconds = 0;
};

struct RunStats {
  double train_runtime = 0;
  double train_samples_per_second = 0;
  int64_t train_samples = 0;          // samples of all steps this session (global batch: all ranks)
  int64_t steps = 0;                  // optimizer steps this session
  int64_t measured_steps = 0;         // steps that the throughput figure covers
  double data_wait_percent = 0;
};

class ThroughputMeter {
 public:
  explicit ThroughputMeter(int64_t throughput_warmup_steps) : warmup_steps_(throughput_warmup_steps) {}

  void start(double t);
  // One optimizer step finished at time t: it consumed `samples` (global) and waited `wait_s` for data.
  void step(double t, int64_t samples, double wait_s, double loss);
  void pause(double t);
  void resume(double t);

  // Stats of the steps since the last take_window() (or start) and begins a new window.
  WindowStats take_window(double t);
  RunStats finish(double t) const;

 private:
  int64_t warmup_steps_;
  double start_ = 0;
  int64_t steps_ = 0, samples_ = 0;
  // Post-warm-up span.
  bool measuring_ = false;
  double measure_start_ = 0, measure_paused_ = 0, measure_wait_ = 0;
  int64_t measure_samples_ = 0, measure_steps_ = 0;
  // Whole-run fallback when the run is not longer than the warm-up.
  double all_paused_ = 0, all_wait_ = 0;
  // Current window.
  double win_start_ = 0, win_paused_ = 0, win_wait_ = 0, win_loss_ = 0;
  int64_t win_steps_ = 0, win_samples_ = 0;
  // Pause bookkeeping.
  bool paused_ = false;
  double pause_start_ = 0;
};

}  // namespace bt::train
