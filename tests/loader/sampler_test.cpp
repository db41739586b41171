#include "loader/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace bt::loader {
namespace {

TEST(Sampler, EpochIsAPermutationDrawnFromSeedAndEpoch) {
  Sampler s(100, SamplerOptions{.seed = 7});
  auto e0 = s.epoch_rows(0), e1 = s.epoch_rows(1);
  auto sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  std::vector<size_t> iota(100);
  std::iota(iota.begin(), iota.end(), size_t{0});
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(e0, iota);
  EXPECT_NE(e0, e1);
  EXPECT_EQ(e0, Sampler(100, SamplerOptions{.seed = 7}).epoch_rows(0));
  EXPECT_NE(e0, Sampler(100, SamplerOptions{.seed = 8}).epoch_rows(0));
  EXPECT_EQ(Sampler(100, SamplerOptions{.shuffle = false}).epoch_rows(3), iota);
}

TEST(Sampler, ShardsAreDisjointCoveringAndEqualLikeDistributedSampler) {
  for (size_t n : {1, 10, 11, 13, 64}) {
    for (int ws : {1, 2, 3, 4, 5}) {
      for (bool drop_last : {false, true}) {
        std::map<size_t, int> seen;
        size_t len = 0;
        for (int r = 0; r < ws; ++r) {
          Sampler s(n, SamplerOptions{.seed = 1, .rank = r, .world_size = ws, .drop_last = drop_last});
          auto rows = s.epoch_rows(2);
          if (r == 0) len = rows.size();
          EXPECT_EQ(rows.size(), len) << "equal length per rank";
          EXPECT_EQ(rows.size(), s.rows_per_epoch());
          for (size_t x : rows) ++seen[x];
        }
        size_t w = static_cast<size_t>(ws);
        if (drop_last) {
          EXPECT_EQ(len, n / w);
          for (auto& [row, c] : seen) EXPECT_EQ(c, 1) << "disjoint";
          EXPECT_EQ(seen.size(), len * w);
        } else {
          EXPECT_EQ(len, (n + w - 1) / w);
          EXPECT_EQ(seen.size(), n) << "covering";
          size_t extra = 0;
          for (auto& [row, c] : seen) extra += static_cast<size_t>(c - 1);
          EXPECT_EQ(extra, len * w - n) << "overlap only by the padding";
        }
      }
    }
  }
}

TEST(Sampler, RejectsBadRank) {
  EXPECT_THROW(Sampler(10, SamplerOptions{.rank = 2, .world_size = 2}), std::exception);
}

// Number of batches containing a repeated image.
size_t batches_with_duplicates(const std::vector<size_t>& rows, const std::vector<uint32_t>& ids, size_t B) {
  size_t bad = 0;
  for (size_t b = 0; b < rows.size(); b += B) {
    std::set<uint32_t> seen;
    bool dup = false;
    for (size_t i = b; i < std::min(rows.size(), b + B); ++i) dup |= !seen.insert(ids[rows[i]]).second;
    bad += dup;
  }
  return bad;
}

TEST(Sampler, DedupeRemovesAvoidableDuplicatesStably) {
  const size_t n = 500, B = 8;
  std::vector<uint32_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = static_cast<uint32_t>(i % 60);  // each image in ~8 rows
  SamplerOptions o{.seed = 3, .batch_size = B};
  auto plain = Sampler(n, o, ids).epoch_rows(0);
  ASSERT_GT(batches_with_duplicates(plain, ids, B), 0u) << "the test needs duplicates to remove";
  o.dedupe_images_in_batch = true;
  auto deduped = Sampler(n, o, ids).epoch_rows(0);
  EXPECT_EQ(batches_with_duplicates(deduped, ids, B), 0u);
  auto a = plain, b = deduped;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b) << "same rows, only reordered";
  EXPECT_EQ(deduped, Sampler(n, o, ids).epoch_rows(0)) << "deterministic";
}

TEST(Sampler, DedupeKeepsOrderWhenNothingToDoOrUnavoidable) {
  std::vector<size_t> rows = {5, 3, 9, 1, 0, 2};
  std::vector<uint32_t> distinct = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto r = rows;
  dedupe_in_batches(r, distinct, 4);
  EXPECT_EQ(r, rows);
  std::vector<uint32_t> same(10, 0);
  r = rows;
  dedupe_in_batches(r, same, 4);
  EXPECT_EQ(r, rows) << "all rows share one image: unavoidable, order kept";
  // Rows 0,1 share an image, 2,3 too: B=2 from [0,1,2,3] must pair them across.
  std::vector<uint32_t> pairs = {0, 0, 1, 1};
  std::vector<size_t> q = {0, 1, 2, 3};
  dedupe_in_batches(q, pairs, 2);
  EXPECT_EQ(q, (std::vector<size_t>{0, 2, 1, 3}));
}

TEST(Sampler, SampleSeedsDifferByRowAndEpoch) {
  EXPECT_NE(sample_seed(1, 0, 5), sample_seed(1, 0, 6));
  EXPECT_NE(sample_seed(1, 0, 5), sample_seed(1, 1, 5));
  EXPECT_NE(sample_seed(1, 0, 5), sample_seed(2, 0, 5));
  EXPECT_EQ(sample_seed(1, 0, 5), sample_seed(1, 0, 5));
}

}  // namespace
}  // namespace bt::loader
