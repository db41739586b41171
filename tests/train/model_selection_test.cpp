// Model selection (train/model_selection.h): HF's defaults, its refusals, best tracking, EarlyStoppingCallback's
// counting, the resume round trip, and which checkpoints rotation deletes.
#include "train/model_selection.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace bt::train {
namespace {

// Options as the flags give them (a function, not designated initializers: -Wmissing-field-initializers).
SelectionOptions opts(std::string metric = "", int greater = -1, bool load_best = false, int64_t patience = 0,
                      double threshold = 0) {
  return {std::move(metric), greater, load_best, patience, threshold};
}

const std::vector<std::string> kKeys = {"eval_loss", "eval_i2t_r1", "eval_matching_accuracy"};

Selection resolve(SelectionOptions o, int64_t eval_steps = 10, int64_t save_steps = 10) {
  return resolve_selection(o, eval_steps, save_steps, kKeys);
}

std::string error_of(SelectionOptions o, int64_t eval_steps, int64_t save_steps,
                     const std::vector<std::string>& keys = kKeys) {
  try {
    resolve_selection(o, eval_steps, save_steps, keys);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ModelSelection, HfDefaults) {
  EXPECT_FALSE(resolve(opts()).active());
  Selection s = resolve(opts("", -1, true));
  EXPECT_EQ(s.metric, "eval_loss");  // HF: "loss" when load_best_model_at_end has no metric
  EXPECT_FALSE(s.greater_is_better);
  s = resolve(opts("matching_accuracy"));
  EXPECT_EQ(s.metric, "eval_matching_accuracy");
  EXPECT_TRUE(s.greater_is_better);
  s = resolve(opts("eval_loss", 1));
  EXPECT_TRUE(s.greater_is_better);
  EXPECT_EQ(resolve(opts("", -1, false, 2)).metric, "eval_loss");
  EXPECT_TRUE(resolve(opts("", -1, true), -1, -1).load_best_at_end);  // both per epoch
}

TEST(ModelSelection, RefusesWhatCannotWork) {
  EXPECT_NE(error_of(opts("r1"), 10, 10).find("report eval_loss, eval_i2t_r1"), std::string::npos);
  EXPECT_NE(error_of(opts("loss"), 10, 10, {}).find("no evaluation split"), std::string::npos);
  EXPECT_NE(error_of(opts("loss"), 0, 10).find("nothing evaluates"), std::string::npos);
  EXPECT_NE(error_of(opts("", -1, true), 10, 15).find("multiple of --eval_steps"), std::string::npos);
  EXPECT_NE(error_of(opts("", -1, true), 10, 0).find("--save_strategy must"), std::string::npos);
  EXPECT_NE(error_of(opts("", -1, true), -1, 10).find("--save_strategy must"), std::string::npos);
  EXPECT_EQ(error_of(opts("", -1, true), 10, 20), "");
  EXPECT_NE(error_of(opts("", 1), 10, 10).find("needs --metric_for_best_model"), std::string::npos);
  EXPECT_NE(error_of(opts("", -1, false, -1), 10, 10).find("patience must be >= 0"), std::string::npos);
}

TEST(ModelSelection, TracksTheBestAndCountsPatienceAsHf) {
  ModelSelector sel(resolve(opts("loss", -1, false, 2, 0.1)));
  EXPECT_TRUE(sel.observe({{"eval_loss", 1.0}}, 10));
  EXPECT_TRUE(sel.observe({{"eval_loss", 0.95}}, 20));  // a new best, but within the threshold: patience 1
  EXPECT_EQ(*sel.best_metric(), 0.95);
  EXPECT_FALSE(sel.should_stop());
  EXPECT_TRUE(sel.observe({{"eval_loss", 0.5}}, 30));  // beats 0.95 by more than 0.1: patience resets
  EXPECT_FALSE(sel.observe({{"eval_loss", 0.7}}, 40));
  EXPECT_FALSE(sel.should_stop());
  EXPECT_FALSE(sel.observe({{"eval_loss", 0.6}}, 50));
  EXPECT_TRUE(sel.should_stop());
  EXPECT_EQ(sel.best_step(), 30);
  EXPECT_NE(sel.stop_reason().find("early stopping at step 50"), std::string::npos) << sel.stop_reason();
  EXPECT_NE(sel.stop_reason().find("best 0.5 at step 30"), std::string::npos) << sel.stop_reason();
}

TEST(ModelSelection, GreaterIsBetterAndNoStopWithoutPatience) {
  ModelSelector sel(resolve(opts("matching_accuracy")));
  EXPECT_TRUE(sel.observe({{"eval_matching_accuracy", 0.2}}, 1));
  EXPECT_FALSE(sel.observe({{"eval_matching_accuracy", 0.2}}, 2));  // a tie is not better
  EXPECT_TRUE(sel.observe({{"eval_matching_accuracy", 0.4}}, 3));
  for (int i = 4; i < 20; ++i) sel.observe({{"eval_matching_accuracy", 0.1}}, i);
  EXPECT_FALSE(sel.should_stop());
  EXPECT_EQ(sel.best_step(), 3);
}

TEST(ModelSelection, StateRoundTripsForResume) {
  const Selection s = resolve(opts("loss", -1, false, 3));
  ModelSelector a(s), b(s);
  a.observe({{"eval_loss", 2.0}}, 5);
  a.observe({{"eval_loss", 2.5}}, 10);
  b.restore(a.to_json());
  EXPECT_EQ(b.to_json(), a.to_json());
  a.observe({{"eval_loss", 3.0}}, 15), b.observe({{"eval_loss", 3.0}}, 15);
  a.observe({{"eval_loss", 3.0}}, 20), b.observe({{"eval_loss", 3.0}}, 20);
  EXPECT_TRUE(b.should_stop());
  EXPECT_EQ(b.stop_reason(), a.stop_reason());
  ModelSelector other(resolve(opts("i2t_r1")));
  other.restore(a.to_json());  // another metric: a fresh start
  EXPECT_FALSE(other.best_metric());
}

TEST(ModelSelection, RotationSparesTheBestAsHf) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(checkpoints_to_delete({10, 20, 30}, 0, 10), V{});
  EXPECT_EQ(checkpoints_to_delete({10, 20, 30}, 2, -1), (V{10}));
  EXPECT_EQ(checkpoints_to_delete({10, 20, 30}, 2, 10), (V{20}));      // best moved to the end
  EXPECT_EQ(checkpoints_to_delete({10, 20, 30}, 1, 10), (V{20}));      // limit 1 keeps the newest and the best
  EXPECT_EQ(checkpoints_to_delete({10, 20, 30}, 1, 30), (V{10, 20}));  // the best is the newest
  EXPECT_EQ(checkpoints_to_delete({10, 20, 30, 40}, 3, 20), (V{10}));
}

}  // namespace
}  // namespace bt::train
