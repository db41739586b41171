#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "common/error.h"
#include "train/schedule.h"

using namespace bt::train;

TEST(Schedule, LinearWarmupThenDecayToZero) {
  Schedule s{ScheduleType::kLinear, 10, 110};
  EXPECT_DOUBLE_EQ(s.lr_factor(0), 0.0);
  EXPECT_DOUBLE_EQ(s.lr_factor(5), 0.5);
  EXPECT_DOUBLE_EQ(s.lr_factor(10), 1.0);
  EXPECT_DOUBLE_EQ(s.lr_factor(60), 0.5);
  EXPECT_DOUBLE_EQ(s.lr_factor(110), 0.0);
  EXPECT_DOUBLE_EQ(s.lr_factor(200), 0.0);
}

TEST(Schedule, LinearWithoutWarmupStartsAtOne) {
  Schedule s{ScheduleType::kLinear, 0, 4};
  EXPECT_DOUBLE_EQ(s.lr_factor(0), 1.0);
  EXPECT_DOUBLE_EQ(s.lr_factor(1), 0.75);
  EXPECT_DOUBLE_EQ(s.lr_factor(3), 0.25);
}

TEST(Schedule, CosineMatchesHfFormula) {
  Schedule s{ScheduleType::kCosine, 4, 24};
  EXPECT_DOUBLE_EQ(s.lr_factor(2), 0.5);
  EXPECT_DOUBLE_EQ(s.lr_factor(4), 1.0);
  EXPECT_NEAR(s.lr_factor(14), 0.5, 1e-12);  // half way through the decay
  const double p = (9.0 - 4.0) / 20.0;
  EXPECT_NEAR(s.lr_factor(9), 0.5 * (1 + std::cos(std::numbers::pi * p)), 1e-12);
  EXPECT_NEAR(s.lr_factor(24), 0.0, 1e-12);
}

TEST(Schedule, ConstantIgnoresWarmupLikeHf) {
  Schedule c{ScheduleType::kConstant, 10, 100};
  EXPECT_DOUBLE_EQ(c.lr_factor(0), 1.0);
  Schedule cw{ScheduleType::kConstantWithWarmup, 10, 100};
  EXPECT_DOUBLE_EQ(cw.lr_factor(0), 0.0);
  EXPECT_DOUBLE_EQ(cw.lr_factor(3), 0.3);
  EXPECT_DOUBLE_EQ(cw.lr_factor(50), 1.0);
}

TEST(Schedule, WarmupRatioRoundsUpAndStepsWin) {
  EXPECT_EQ(resolve_warmup_steps(0, 0.1, 95), 10);
  EXPECT_EQ(resolve_warmup_steps(0, 0.0, 95), 0);
  EXPECT_EQ(resolve_warmup_steps(7, 0.5, 95), 7);
}

TEST(Schedule, ParseNames) {
  EXPECT_EQ(parse_schedule_type("cosine"), ScheduleType::kCosine);
  EXPECT_STREQ(schedule_name(parse_schedule_type("constant")), "constant");
  EXPECT_THROW(parse_schedule_type("polynomial_x"), bt::Error);
}

// Issue 57: a resume whose plan changes the rate of a step still to train is found (the schedule would jump); a
// constant rate extended, or the same plan, is not.
TEST(Schedule, AResumeFindsTheFirstStepWhoseRateJumps) {
  const Schedule linear300{ScheduleType::kLinear, 0, 300}, linear60{ScheduleType::kLinear, 0, 60};
  EXPECT_EQ(first_schedule_difference(linear300, linear300, 30), -1);
  EXPECT_EQ(first_schedule_difference(linear300, linear60, 30), 30);  // 0.9 of the peak, then 0.5
  EXPECT_EQ(first_schedule_difference(linear60, linear300, 60), 60);  // a finished decay starting over
  const Schedule const2{ScheduleType::kConstant, 0, 2}, const4{ScheduleType::kConstant, 0, 4};
  EXPECT_EQ(first_schedule_difference(const2, const4, 2), -1);
  const Schedule warm{ScheduleType::kConstantWithWarmup, 10, 100}, warm_more{ScheduleType::kConstantWithWarmup, 20, 200};
  EXPECT_EQ(first_schedule_difference(warm, warm_more, 5), 5);    // in the warm-up
  EXPECT_EQ(first_schedule_difference(warm, warm_more, 20), -1);  // both past it: 1.0 from here on
  EXPECT_EQ(first_schedule_difference(linear300, Schedule{ScheduleType::kCosine, 0, 300}, 0), 1);
}
