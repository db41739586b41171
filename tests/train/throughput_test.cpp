#include <gtest/gtest.h>

#include "train/throughput.h"

using namespace bt::train;

TEST(Throughput, ExcludesWarmupStepsLikeHf) {
  ThroughputMeter m(2);
  m.start(100.0);
  m.step(110.0, 8, 5.0, 4.0);  // slow first steps (compilation, worker start-up)
  m.step(112.0, 8, 1.0, 3.0);  // warm-up ends here
  m.step(113.0, 8, 0.0, 2.0);
  m.step(114.0, 8, 0.5, 1.0);
  RunStats r = m.finish(114.0);
  EXPECT_DOUBLE_EQ(r.train_runtime, 14.0);
  EXPECT_EQ(r.train_samples, 32);
  EXPECT_EQ(r.measured_steps, 2);
  EXPECT_DOUBLE_EQ(r.train_samples_per_second, 16.0 / 2.0);
  EXPECT_DOUBLE_EQ(r.data_wait_percent, 100.0 * 0.5 / 2.0);
}

TEST(Throughput, RunNoLongerThanWarmupUsesEverything) {
  ThroughputMeter m(5);
  m.start(0.0);
  m.step(1.0, 4, 0.25, 1.0);
  m.step(2.0, 4, 0.25, 1.0);
  RunStats r = m.finish(2.0);
  EXPECT_EQ(r.measured_steps, 2);
  EXPECT_DOUBLE_EQ(r.train_samples_per_second, 4.0);
  EXPECT_DOUBLE_EQ(r.data_wait_percent, 25.0);
}

TEST(Throughput, WindowsAndPausesAreExcluded) {
  ThroughputMeter m(0);
  m.start(0.0);
  m.step(1.0, 10, 0.1, 2.0);
  m.step(2.0, 10, 0.1, 4.0);
  WindowStats w = m.take_window(2.0);
  EXPECT_EQ(w.steps, 2);
  EXPECT_DOUBLE_EQ(w.mean_loss, 3.0);
  EXPECT_DOUBLE_EQ(w.samples_per_s, 10.0);
  EXPECT_NEAR(w.data_wait_percent, 10.0, 1e-12);
  m.pause(2.0);  // eval for 5 s
  m.resume(7.0);
  m.step(8.0, 10, 0.5, 1.0);
  w = m.take_window(8.0);
  EXPECT_DOUBLE_EQ(w.seconds, 1.0);
  EXPECT_DOUBLE_EQ(w.samples_per_s, 10.0);
  EXPECT_DOUBLE_EQ(w.data_wait_percent, 50.0);
  RunStats r = m.finish(8.0);
  EXPECT_DOUBLE_EQ(r.train_runtime, 8.0);  // wall time keeps the pause
  EXPECT_DOUBLE_EQ(r.train_samples_per_second, 30.0 / 3.0);
}
