// eval/metrics.h: the metric names every result file takes from one place, and model selection's list of them.
#include "eval/metrics.h"

#include <gtest/gtest.h>

using namespace bt::eval;

TEST(Metrics, RecallAndMatchingKeysCarryThePrefix) {
  RetrievalScores r;
  r.i2t_r1 = 0.1, r.i2t_r5 = 0.5, r.i2t_r10 = 1.0, r.t2i_r1 = 0.2, r.t2i_r5 = 0.6, r.t2i_r10 = 0.9;
  r.i2t_median_rank = 3;  // not one of the six
  EXPECT_EQ(to_json(r, "test"), (nlohmann::json{{"test_i2t_r1", 0.1}, {"test_i2t_r5", 0.5}, {"test_i2t_r10", 1.0},
                                                 {"test_t2i_r1", 0.2}, {"test_t2i_r5", 0.6}, {"test_t2i_r10", 0.9}}));
  MatchingScores m;
  m.accuracy = 0.4, m.chance = 0.2, m.count = 5;
  EXPECT_EQ(to_json(m, "eval"), (nlohmann::json{{"eval_matching_accuracy", 0.4}, {"eval_matching_chance", 0.2}}));
}

TEST(Metrics, ASplitsEvaluationIsLossSamplesRecallAndMatching) {
  SplitEval e;
  e.retrieval.loss = 1.5, e.retrieval.pairs = 20, e.retrieval.loss_samples = 19;
  nlohmann::json j = to_json(e, "eval");
  EXPECT_EQ(j.size(), 8u);
  EXPECT_EQ(j["eval_loss"], 1.5);
  EXPECT_EQ(j["eval_samples"], 20);  // every scored pair (the loss may have left out a last batch of one row)
  EXPECT_FALSE(j.contains("eval_matching_accuracy"));
  e.matching.emplace();
  j = to_json(e, "eval");
  EXPECT_EQ(j.size(), 10u);
  EXPECT_TRUE(j.contains("eval_matching_chance"));
  // Model selection's names are exactly the keys an evaluation writes, bar the sample count.
  for (bool with_matching : {false, true}) {
    const auto keys = eval_metric_keys(with_matching);
    EXPECT_EQ(keys.size(), with_matching ? 9u : 7u);
    EXPECT_EQ(keys.front(), "eval_loss");
    for (const std::string& k : keys) EXPECT_TRUE(j.contains(k)) << k;
  }
}
