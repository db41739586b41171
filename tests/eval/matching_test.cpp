#include <gtest/gtest.h>

#include "common/error.h"
#include "eval/matching.h"
#include "eval/retrieval.h"

using namespace bt::eval;

TEST(Matching, PicksTheMostSimilarChoice) {
  // 4 texts x 2 images.
  std::vector<float> sim = {0.1f, 0.7f,   //
                            0.9f, 0.2f,   //
                            0.3f, 0.8f,   //
                            0.2f, 0.1f};
  std::vector<MatchingQuestion> q = {{0, {0, 1, 2}, 1}, {1, {0, 1, 2, 3}, 0}};
  std::vector<MatchingAnswer> a;
  auto s = score_matching(sim, 4, 2, q, &a);
  EXPECT_EQ(s.count, 2);
  EXPECT_DOUBLE_EQ(s.accuracy, 0.5);  // image 0: text 1 (0.9) right; image 1: text 2 (0.8) beats label 0 (0.7)
  EXPECT_DOUBLE_EQ(s.chance, (1.0 / 3 + 1.0 / 4) / 2);  // guessing: the mean of 1 / choices
  EXPECT_EQ(a[0].predicted, 1);
  EXPECT_EQ(a[1].predicted, 2);
  EXPECT_EQ(a[1].scores, (std::vector<float>{0.7f, 0.2f, 0.8f, 0.1f}));
}

TEST(Matching, TiesCountAgainstTheRow) {
  std::vector<float> sim(5, 0.5f);
  auto s = score_matching(sim, 5, 1, {{0, {0, 1, 2, 3, 4}, 2}}, nullptr);
  EXPECT_DOUBLE_EQ(s.accuracy, 0.0);
}

TEST(Matching, BadIndicesAreErrors) {
  EXPECT_THROW(score_matching({1, 2}, 2, 1, {{0, {0, 5}, 0}}, nullptr), bt::Error);
  EXPECT_THROW(score_matching({1, 2}, 2, 1, {{0, {0, 1}, 2}}, nullptr), bt::Error);
  EXPECT_THROW(score_matching({1, 2}, 2, 1, {{3, {0, 1}, 0}}, nullptr), bt::Error);
}

TEST(Retrieval, MedianRanksAreOneBased) {
  // 3 texts, 3 images; ranks of the correct image per text: 0, 1, 2 -> median 1 (0-based) -> 2.
  std::vector<float> sim = {0.9f, 0.1f, 0.0f,   //
                            0.8f, 0.5f, 0.1f,   //
                            0.9f, 0.8f, 0.1f};
  auto r = retrieval_recall(sim, 3, 3, {0, 1, 2});
  EXPECT_DOUBLE_EQ(r.t2i_median_rank, 2.0);
  // Per image (column), one other text ties or beats its own (text 2 ties at 0.9; text 2's 0.8 beats 0.5;
  // text 1 ties at 0.1): 0-based ranks {1, 1, 1} -> median 2.
  EXPECT_DOUBLE_EQ(r.i2t_median_rank, 2.0);
}
