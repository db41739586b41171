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

// Issue 57: without data the demo runs only when asked (--demo; the CLI sets it for `bridgetune train` alone): a user
// who named a model or an output folder but forgot --train_file gets one line naming it, not 6000 cartoons.
TEST(RunSettings, NoDataIsRefusedUnlessTheDemoIsAsked) {
  TrainOptions o;
  o.output_dir = "mine";
  o.model_name_or_path = "ckpt";
  EXPECT_EQ(error_of([&] { resolve_settings(o); }),
            "no training data: give --train_file (or --train_shards, --dataset_name); --demo trains on the built-in "
            "demo's generated cartoons instead");
  o.demo = true;
  EXPECT_TRUE(resolve_settings(o).demo);
  o.train_file = "data.csv";
  EXPECT_EQ(error_of([&] { resolve_settings(o); }),
            "--demo trains on its own generated data: give it without --train_file (or drop --demo)");
  o.train_file.clear();
  TrainInputs eval_only;
  eval_only.train = false;
  EXPECT_NE(error_of([&] { resolve_settings(o, eval_only); }).find("--demo trains the demo model"), std::string::npos);
  o.demo = false;
  EXPECT_FALSE(resolve_settings(o, eval_only).demo);  // evaluating a model needs no training data
}

// Issue 57: flags that together do nothing or contradict each other are refused in one line.
TEST(RunSettings, CombinationsThatDoNothingAreRefused) {
  TrainOptions o;
  o.train_file = "data";
  o.eval_strategy = IntervalStrategy::kSteps;
  EXPECT_EQ(error_of([&] { resolve_settings(o); }),
            "--eval_strategy steps evaluates during training, but there is no validation data: give --validation_file "
            "(or --dataset_name with a validation split)");
  o.eval_strategy.reset();
  o.eval_steps = 10;
  EXPECT_EQ(error_of([&] { resolve_settings(o); }).rfind("--eval_steps 10 evaluates during training", 0), 0u);
  o.validation_file = "val";
  EXPECT_EQ(error_of([&] { resolve_settings(o); }), "");
  o.freeze_vision_model = true;
  o.vision_learning_rate = 1e-3;
  EXPECT_EQ(error_of([&] { resolve_settings(o); }),
            "--freeze_vision_model keeps that tower's weights fixed, so --vision_learning_rate 0.001 would have no "
            "effect: drop one of them");
  o.freeze_vision_model = false;
  o.learning_rate = 0;
  EXPECT_NE(error_of([&] { resolve_settings(o); }).find("needs --learning_rate > 0"), std::string::npos);
  o.learning_rate.reset();
  o.vision_learning_rate = -1;
  EXPECT_EQ(error_of([&] { resolve_settings(o); }), "--vision_learning_rate must be >= 0 (got -1)");
  o.vision_learning_rate.reset();
  o.lora_rank = 4;  // on a from-scratch preset: explained in one line (it still measures LoRA's speed)
  RunSettings s = resolve_settings(o);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0].rfind("note: --lora_rank 4 without --model_name_or_path: the adapters train beside the "
                             "--model_preset tiny's randomly initialised, frozen weights", 0),
            0u) << s.notes[0];
  o.model_name_or_path = "ckpt";
  EXPECT_TRUE(resolve_settings(o).notes.empty());
}

TEST(RunSettings, TheDemoFillsOnlyTheFlagsNotGiven) {
  TrainOptions o;
  o.output_dir = "out";
  o.demo = true;
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
  // The user's options stay as given: nothing above wrote into them.
  EXPECT_FALSE(o.learning_rate.has_value());
}

TEST(RunSettings, StrategiesBestModelAndFp16) {
  TrainOptions o;
  o.train_file = "data";
  o.validation_file = "val";
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
  o.validation_file = "val";
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
