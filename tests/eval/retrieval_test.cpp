#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "eval/retrieval.h"
#include "rank_bounds.h"

using namespace bt::eval;

TEST(Retrieval, PerfectAndSharedImages) {
  // 3 texts, 2 images; texts 0 and 1 describe image 0.
  std::vector<float> sim = {0.9f, 0.1f,   //
                            0.2f, 0.8f,   // text 1 prefers the wrong image
                            0.0f, 1.0f};
  auto r = retrieval_recall(sim, 3, 2, {0, 0, 1});
  EXPECT_DOUBLE_EQ(r.t2i_r1, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(r.t2i_r5, 1.0);
  // image 0: best own text (0.9) outranks everything; image 1: own text 1.0 is top.
  EXPECT_DOUBLE_EQ(r.i2t_r1, 1.0);
}

TEST(Retrieval, TiesCountAgainstTheQuery) {
  std::vector<float> sim(4 * 4, 0.5f);
  auto r = retrieval_recall(sim, 4, 4, {0, 1, 2, 3});
  EXPECT_DOUBLE_EQ(r.t2i_r1, 0.0);
  EXPECT_DOUBLE_EQ(r.i2t_r1, 0.0);
  EXPECT_DOUBLE_EQ(r.t2i_r5, 1.0);
}

TEST(Retrieval, BadShapesAreErrors) {
  EXPECT_THROW(retrieval_recall({1, 2, 3}, 2, 2, {0, 1}), bt::Error);
  EXPECT_THROW(retrieval_recall({1, 2, 3, 4}, 2, 2, {0, 5}), bt::Error);
}

// The tolerance bounds of tests/eval/rank_bounds.h: one value where gaps are wide, both outcomes of a near-tie.
TEST(Retrieval, ToleranceBoundsAreExactOnWideGapsAndCoverANearTie) {
  const std::vector<float> wide = {0.9f, 0.1f, 0.2f, 0.8f, 0.0f, 1.0f};
  const auto exact = retrieval_recall(wide, 3, 2, {0, 0, 1});
  const auto r = bt::test::retrieval_bounds(wide, 3, 2, {0, 0, 1}, 1e-5f);
  EXPECT_DOUBLE_EQ(r.favourable.t2i_r1, exact.t2i_r1);
  EXPECT_DOUBLE_EQ(r.unfavourable.t2i_r1, exact.t2i_r1);
  EXPECT_DOUBLE_EQ(r.unfavourable.t2i_median_rank, exact.t2i_median_rank);
  bt::test::expect_within(exact, r, "the scores themselves");
  // text 0 ties its own image with image 1 (within 1e-7): ties count against it, a last-bit change the other way
  const std::vector<float> tie = {0.5f, 0.5f + 1e-7f, 0.0f, 1.0f};
  const auto t = bt::test::retrieval_bounds(tie, 2, 2, {0, 1}, 1e-5f);
  EXPECT_DOUBLE_EQ(t.unfavourable.t2i_r1, 0.5);
  EXPECT_DOUBLE_EQ(t.favourable.t2i_r1, 1.0);
  auto flipped = retrieval_recall(tie, 2, 2, {0, 1});
  bt::test::expect_within(flipped, t, "a tie");
  flipped.t2i_r1 = 0.0;  // outside [0.5, 1]: the helper's check fails
  EXPECT_NONFATAL_FAILURE(bt::test::expect_within(flipped, t, "out"), "float error allows [0.5, 1]");
}
