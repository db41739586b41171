// Retrieval recall and median ranks checked only as far as float error allows (issue 52; the Python twin is
// tests/python/rank_bounds.py). Two computations of one model's embeddings (the encoders vs the full forward,
// other batch shapes, other kernels or thread counts) differ in their last bits, and a rank is not continuous in
// the scores. retrieval_bounds() scores `sim` twice: with every right (text, image) pair raised by tol and every
// other pair lowered by tol, and the reverse. Each metric is monotone in that change, so scores within tol of
// `sim` give values between the two; expect_within() fails only outside them, where the difference is real.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "eval/retrieval.h"

namespace bt::test {

struct RetrievalRange {
  eval::RetrievalScores favourable, unfavourable;
};

inline RetrievalRange retrieval_bounds(const std::vector<float>& sim, int64_t n_text, int64_t n_image,
                                       const std::vector<int64_t>& text_image, float tol) {
  std::vector<float> up = sim, down = sim;
  for (int64_t t = 0; t < n_text; ++t)
    for (int64_t i = 0; i < n_image; ++i) {
      const bool right = text_image[size_t(t)] == i;
      up[size_t(t * n_image + i)] += right ? tol : -tol;
      down[size_t(t * n_image + i)] += right ? -tol : tol;
    }
  return {eval::retrieval_recall(up, n_text, n_image, text_image),
          eval::retrieval_recall(down, n_text, n_image, text_image)};
}

// Recalls between the unfavourable and favourable ends, median ranks between the favourable and unfavourable.
inline void expect_within(const eval::RetrievalScores& got, const RetrievalRange& r, const std::string& what) {
  const auto& hi = r.favourable;
  const auto& lo = r.unfavourable;
  auto between = [&](const char* name, double v, double low, double high) {
    EXPECT_TRUE(low - 1e-12 <= v && v <= high + 1e-12)
        << what << ": " << name << " = " << v << ", float error allows [" << low << ", " << high << "]";
  };
  between("t2i_r1", got.t2i_r1, lo.t2i_r1, hi.t2i_r1);
  between("t2i_r5", got.t2i_r5, lo.t2i_r5, hi.t2i_r5);
  between("t2i_r10", got.t2i_r10, lo.t2i_r10, hi.t2i_r10);
  between("i2t_r1", got.i2t_r1, lo.i2t_r1, hi.i2t_r1);
  between("i2t_r5", got.i2t_r5, lo.i2t_r5, hi.i2t_r5);
  between("i2t_r10", got.i2t_r10, lo.i2t_r10, hi.i2t_r10);
  between("t2i_median_rank", got.t2i_median_rank, hi.t2i_median_rank, lo.t2i_median_rank);
  between("i2t_median_rank", got.i2t_median_rank, hi.i2t_median_rank, lo.i2t_median_rank);
  EXPECT_DOUBLE_EQ(got.r1_chance, hi.r1_chance) << what;
}

}  // namespace bt::test
