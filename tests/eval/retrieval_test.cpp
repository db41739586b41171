#include <gtest/gtest.h>

#include "common/error.h"
#include "eval/retrieval.h"

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
