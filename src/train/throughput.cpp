#include "train/throughput.h"

namespace bt::train {

void ThroughputMeter::start(double t) {
  *this = ThroughputMeter(warmup_steps_);
  start_ = t;
  win_start_ = t;
  if (warmup_steps_ <= 0) {
    measuring_ = true;
    measure_start_ = t;
  }
}

void ThroughputMeter::step(double t, int64_t samples, double wait_s, double loss) {
  ++steps_;
  samples_ += samples;
  all_wait_ += wait_s;
  if (measuring_) {
    measure_samples_ += samples;
    measure_wait_ += wait_s;
    ++measure_steps_;
  }
  if (!measuring_ && steps_ == warmup_steps_) {
    // The warm-up steps are done: measuring starts with the next step.
    measuring_ = true;
    measure_start_ = t;
  }
  ++win_steps_;
  win_samples_ += samples;
  win_wait_ += wait_s;
  win_loss_ += loss;
}

void ThroughputMeter::pause(double t) {
  if (paused_) return;
  paused_ = true;
  pause_start_ = t;
}

void ThroughputMeter::resume(double t) {
  if (!paused_) return;
  paused_ = false;
  const double d = t - pause_start_;
  all_paused_ += d;
  win_paused_ += d;
  if (measuring_ && pause_start_ >= measure_start_) measure_paused_ += d;
}

WindowStats ThroughputMeter::take_window(double t) {
  WindowStats w;
  w.steps = win_steps_;
  w.seconds = t - win_start_ - win_paused_;
  if (win_steps_ > 0) w.mean_loss = win_loss_ / static_cast<double>(win_steps_);
  if (w.seconds > 0) {
    w.samples_per_s = static_cast<double>(win_samples_) / w.seconds;
    w.data_wait_percent = 100.0 * win_wait_ / w.seconds;
  }
  win_start_ = t;
  win_paused_ = win_wait_ = win_loss_ = 0;
  win_steps_ = win_samples_ = 0;
  return w;
}

RunStats ThroughputMeter::finish(double t) const {
  RunStats r;
  r.train_runtime = t - start_;
  r.train_samples = samples_;
  r.steps = steps_;
  double span, wait;
  int64_t samples;
  if (measuring_ && measure_steps_ > 0) {
    span = t - measure_start_ - measure_paused_;
    wait = measure_wait_;
    samples = measure_samples_;
    r.measured_steps = measure_steps_;
  } else {
    span = t - start_ - all_paused_;
    wait = all_wait_;
    samples = samples_;
    r.measured_steps = steps_;
  }
  if (span > 0) {
    r.train_samples_per_second = static_cast<double>(samples) / span;
    r.data_wait_percent = 100.0 * wait / span;
  }
  return r;
}

}  // namespace bt::train
