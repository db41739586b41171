#include "loader/sampler.h"

#include "common/error.h"

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

// Uneven groups (a parquet dataset's row groups: 100-row groups and a short last one, several files).
std::vector<size_t> uneven_group_ends() {
  std::vector<size_t> ends;
  size_t end = 0;
  for (size_t len : {7, 10, 10, 3, 10, 1, 10, 10, 9, 10, 4}) ends.push_back(end += len);
  return ends;
}

size_t group_of(const std::vector<size_t>& ends, size_t row) {
  return static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), row) - ends.begin());
}

TEST(SamplerLocality, OrderIsAPermutationDeterministicAndDrawnFromSeedAndEpoch) {
  const auto ends = uneven_group_ends();
  const size_t n = ends.back();
  SamplerOptions o{.seed = 3};
  o.row_group_ends = ends;
  o.shuffle_window_groups = 3;
  Sampler s(n, o);
  auto e0 = s.epoch_rows(0);
  auto sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  std::vector<size_t> iota(n);
  std::iota(iota.begin(), iota.end(), size_t{0});
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(e0, iota);
  EXPECT_EQ(e0, Sampler(n, o).epoch_rows(0)) << "deterministic";
  EXPECT_NE(e0, s.epoch_rows(1)) << "differs per epoch";
  o.seed = 4;
  EXPECT_NE(e0, Sampler(n, o).epoch_rows(0)) << "differs per seed";
  EXPECT_NE(e0, Sampler(n, SamplerOptions{.seed = 3}).epoch_rows(0)) << "not the fully random order";
  o.shuffle = false;
  EXPECT_EQ(Sampler(n, o).epoch_rows(0), iota) << "shuffle off: identity";
  o.shuffle = true;
  o.shuffle_window_groups = 0;
  o.seed = 3;
  EXPECT_EQ(Sampler(n, o).epoch_rows(5), Sampler(n, SamplerOptions{.seed = 3}).epoch_rows(5))
      << "window 0: the fully random order, unchanged";
}

TEST(SamplerLocality, EachWindowHoldsTheRowsOfExactlyKGroups) {
  const auto ends = uneven_group_ends();
  const size_t ng = ends.size();
  for (size_t k : {1, 2, 3, 4, 11, 20}) {
    for (uint64_t epoch : {0, 1, 2}) {
      auto order = locality_order(ends, k, 9, epoch);
      ASSERT_EQ(order.size(), ends.back());
      // Walk the order: a window closes once it has taken every row of its k groups.
      size_t pos = 0, windows = 0;
      std::set<size_t> groups_seen;
      while (pos < order.size()) {
        std::set<size_t> groups;
        size_t need = 0;
        std::map<size_t, size_t> taken;
        size_t start = pos;
        while (pos < order.size()) {
          size_t g = group_of(ends, order[pos]);
          if (!groups.count(g)) {
            if (groups.size() == k) break;
            groups.insert(g);
            need += ends[g] - (g ? ends[g - 1] : 0);
          }
          ++taken[g];
          ++pos;
          if (pos - start == need && groups.size() == std::min(k, ng - groups_seen.size())) break;
        }
        EXPECT_EQ(pos - start, need) << "k " << k << ": window " << windows << " holds whole groups only";
        for (size_t g : groups) EXPECT_TRUE(groups_seen.insert(g).second) << "group " << g << " split across windows";
        ++windows;
      }
      EXPECT_EQ(groups_seen.size(), ng);
      EXPECT_EQ(windows, (ng + k - 1) / k) << "k " << k;
    }
  }
  // k = 1: rows of one group stay together but are shuffled within it.
  auto one = locality_order(ends, 1, 9, 0);
  bool shuffled_within = false;
  for (size_t i = 1; i < one.size(); ++i) shuffled_within |= one[i] != one[i - 1] + 1 && group_of(ends, one[i]) == group_of(ends, one[i - 1]);
  EXPECT_TRUE(shuffled_within);
  // Group order is shuffled too: the first window is not always group 0.
  std::set<size_t> first_groups;
  for (uint64_t e = 0; e < 8; ++e) first_groups.insert(group_of(ends, locality_order(ends, 1, 9, e)[0]));
  EXPECT_GT(first_groups.size(), 1u);
}

TEST(SamplerLocality, ShardsAreDisjointCoveringEqualAndInterleaveTheGlobalOrder) {
  const auto ends = uneven_group_ends();
  const size_t n = ends.back();
  for (int ws : {1, 2, 3, 4, 7}) {
    for (bool drop_last : {false, true}) {
      SamplerOptions o{.seed = 5, .world_size = ws, .drop_last = drop_last};
      o.row_group_ends = ends;
      o.shuffle_window_groups = 2;
      const auto global = locality_order(ends, 2, 5, 1);
      std::map<size_t, int> seen;
      size_t len = Sampler(n, o).rows_per_epoch();
      for (int r = 0; r < ws; ++r) {
        o.rank = r;
        auto rows = Sampler(n, o).epoch_rows(1);
        ASSERT_EQ(rows.size(), len) << "equal length per rank";
        for (size_t i = 0; i < rows.size(); ++i) {
          EXPECT_EQ(rows[i], global[(i * static_cast<size_t>(ws) + static_cast<size_t>(r)) % n])
              << "rank " << r << " takes positions r, r + ws, ... of the global order";
          ++seen[rows[i]];
        }
      }
      size_t total = static_cast<size_t>(ws) * len;
      if (drop_last) {
        EXPECT_EQ(seen.size(), total) << "disjoint";
      } else {
        EXPECT_EQ(seen.size(), n) << "covering";
        for (auto [row, c] : seen) EXPECT_LE(c, 2) << "padding repeats a row at most once";
      }
    }
  }
}

TEST(SamplerLocality, RejectsGroupsThatDoNotCoverTheDataset) {
  SamplerOptions o;
  o.shuffle_window_groups = 2;
  o.row_group_ends = {5, 10};
  EXPECT_THROW(Sampler(11, o), bt::Error);
  o.row_group_ends = {5, 5, 10};
  EXPECT_THROW(Sampler(10, o), bt::Error);
  o.row_group_ends = {6, 10};
  EXPECT_NO_THROW(Sampler(10, o));
}

TEST(Sampler, SampleSeedsDifferByRowAndEpoch) {
  EXPECT_NE(sample_seed(1, 0, 5), sample_seed(1, 0, 6));
  EXPECT_NE(sample_seed(1, 0, 5), sample_seed(1, 1, 5));
  EXPECT_NE(sample_seed(1, 0, 5), sample_seed(2, 0, 5));
  EXPECT_EQ(sample_seed(1, 0, 5), sample_seed(1, 0, 5));
}

}  // namespace
}  // namespace bt::loader
