// train/loss_scale.h: GradScaler's policy: skip and halve on a non-finite step, double after N clean steps,
// and the state survives a checkpoint.
#include "train/loss_scale.h"

#include <gtest/gtest.h>

namespace bt::train {
namespace {

TEST(LossScale, SkipsAndHalvesOnNonFiniteGrowsAfterCleanSteps) {
  LossScale s(1024.0, 3);
  EXPECT_TRUE(s.update(false));
  EXPECT_TRUE(s.update(false));
  EXPECT_EQ(s.scale(), 1024.0);
  EXPECT_TRUE(s.update(false));  // the third clean step in a row
  EXPECT_EQ(s.scale(), 2048.0);
  EXPECT_FALSE(s.update(true));  // skipped
  EXPECT_EQ(s.scale(), 1024.0);
  EXPECT_EQ(s.skipped_steps(), 1);
  EXPECT_TRUE(s.update(false));
  EXPECT_TRUE(s.update(false));
  EXPECT_FALSE(s.update(true));  // the clean run is broken: no growth, halved again
  EXPECT_EQ(s.scale(), 512.0);
  for (int i = 0; i < 3; ++i) s.update(false);
  EXPECT_EQ(s.scale(), 1024.0);
}

TEST(LossScale, StateRoundTrips) {
  LossScale a(256.0, 4), b(65536.0, 4);
  a.update(false), a.update(true), a.update(false);
  b.restore(a.to_json());
  EXPECT_EQ(b.to_json(), a.to_json());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(a.update(false), b.update(false));
  EXPECT_EQ(a.scale(), b.scale());
  LossScale c(8.0);
  c.restore({{"scale", -1.0}});  // nonsense is ignored
  EXPECT_EQ(c.scale(), 8.0);
}

}  // namespace
}  // namespace bt::train
