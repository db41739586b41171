// The one resolution of a train run's options (src/train/run_settings.h): the demo's recipe, HF's strategies, --fp16,
// and the "rows for a step" rule.
#include "train/run_settings.h"

#include <gtest/gtest.h>

#include <functional>

#include "common/error.h"
#include "train/demo.h"

namespace bt::train {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RunSettings, TheDemoFillsOnlyTheFlagsNotGiven) {
  TrainOptions o;
  o.output_dir = "out";
  o.per_device_train_batch_size = 8;
  const RunSettings s = resolve_settings(o);
  EXPECT_TRUE(s.demo);
  EXPECT_EQ(s.train_path, demo::train_dir("out"));
  EXPECT_EQ(s.train_batch, 8);  // given
  EXPECT_EQ(s.learning_rate, demo::kLearningRate);
  EXPECT_EQ(s.dropout, demo::kDropout);
  EXPECT_EQ(s.eval.strategy, IntervalStrategy::kSteps);
  EXPECT_EQ(s.eval.steps, 187);  // an epoch of 6000 rows at the demo's batch of 32
  EXPECT_EQ(s.save.steps, 187);
  o.validation_file = "val";
  EXPECT_EQ(error_of([&] { resolve_settings(o); }), "--validation_file needs --train_file (the demo makes its own split)");
  TrainInputs eval_only;
  eval_only.train = false;
  EXPECT_FALSE(resolve_settings(o, eval_only).demo);
  // The user's options stay as given: nothing above wrote into them.
  EXPECT_FALSE(o.learning_rate.has_value());
}

TEST(RunSettings, StrategiesBestModelAndFp16) {
  TrainOptions o;
  o.train_file = "data";
  o.logging_steps = 5;
  o.eval_strategy = IntervalStrategy::kSteps;  // without --eval_steps: every --logging_steps
  o.load_best_model_at_end = true;             // no save flag: a checkpoint at every evaluation
  o.fp16 = true;                               // on the CPU: bf16 autocast
  RunSettings s = resolve_settings(o);
  EXPECT_FALSE(s.demo);
  EXPECT_EQ(s.eval.steps, 5);
  EXPECT_EQ(s.save.strategy, IntervalStrategy::kSteps);
  EXPECT_EQ(s.save.steps, 5);
  EXPECT_TRUE(s.bf16 && !s.fp16);
  ASSERT_EQ(s.notes.size(), 2u);
  o.save_strategy = IntervalStrategy::kSteps;  // without --save_steps: HF's 500
  o.eval_strategy = IntervalStrategy::kEpoch;
  o.device = "cuda:1";
  s = resolve_settings(o);
  EXPECT_EQ(s.save.steps, 500);
  EXPECT_EQ(s.eval.as_flag(), -1);
  EXPECT_TRUE(s.fp16 && !s.bf16);
  const nlohmann::json j = effective_arguments(o, s);
  EXPECT_EQ(j["eval_strategy"], "epoch");
  EXPECT_TRUE(j["eval_steps"].is_null());
  EXPECT_EQ(j["save_steps"], 500);
}

TEST(RunSettings, OneRuleForTheRowsOfAStep) {
  TrainOptions o;
  o.train_shards = "s/*.tar";
  o.per_device_train_batch_size = 4;
  o.gradient_accumulation_steps = 2;
  o.world_size = 3;
  o.eval_steps = -1;  // each epoch
  o.max_steps = 10;
  const RunSettings s = resolve_settings(o);
  const StepPlan p = plan_steps(50, o, s);  // 17 rows a rank (padded), 4 batches, 2 steps
  EXPECT_EQ(p.batches_per_epoch, 4u);
  EXPECT_EQ(p.steps_per_epoch, 2);
  EXPECT_EQ(p.eval_steps, 2);
  EXPECT_EQ(p.total_steps, 10);
  EXPECT_EQ(error_of([&] { plan_steps(20, o, s); }),
            "--train_shards s/*.tar: 20 rows, fewer than one step needs (--per_device_train_batch_size 4 x "
            "--gradient_accumulation_steps 2 x ranks 3)");
  TrainInputs hub;
  hub.train_path = "/cache/train-0.parquet";
  hub.train_named = "--dataset_name org/x (split train)";
  o.train_shards.clear();
  EXPECT_EQ(error_of([&] { plan_steps(20, o, resolve_settings(o, hub)); }).rfind("--dataset_name org/x (split train): 20 rows", 0),
            0u);
}

}  // namespace
}  // namespace bt::train
