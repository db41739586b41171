// train/batch_search.h: the largest batch within a memory budget, found by probing (here: memory models instead of
// training runs).
#include <gtest/gtest.h>

#include <cmath>

#include "train/batch_search.h"

using bt::train::BatchProbe;
using bt::train::BatchSearchOptions;
using bt::train::find_max_batch;

namespace {
// A probe whose peak memory follows `bytes(batch)`; counts the runs and the largest memory a run touched.
struct FakeProbe {
  std::function<double(int)> bytes;
  int fail_from = 1 << 30;  // batches from here fail (an out-of-memory exception)
  int runs = 0;
  double most = 0;
  BatchProbe operator()(int b) {
    ++runs;
    BatchProbe p;
    p.ran = true;
    if (b >= fail_from) {
      p.error = "CUDA out of memory";
      return p;
    }
    p.peak_bytes = static_cast<uint64_t>(bytes(b));
    most = std::max(most, bytes(b));
    return p;
  }
};

BatchSearchOptions budget(double bytes, int max_batch = 1 << 16) {
  BatchSearchOptions o;
  o.budget_bytes = static_cast<uint64_t>(bytes);
  o.max_batch = max_batch;
  return o;
}
}  // namespace

TEST(BatchSearch, LinearMemoryFindsTheExactLargestBatchInFewProbes) {
  FakeProbe f{[](int b) { return 1000.0 + 100.0 * b; }};
  const auto r = find_max_batch(std::ref(f), budget(1000 + 100 * 37 + 50));
  EXPECT_EQ(r.largest_fit, 37);
  EXPECT_EQ(r.bound, "38 does not fit");
  EXPECT_LE(f.runs, 6);
  EXPECT_LE(f.most, 1.25 * (1000 + 100 * 37 + 50)) << "a probe ran far over the budget";
}

TEST(BatchSearch, CurvedMemoryIsStillDecidedByMeasurement) {
  FakeProbe f{[](int b) { return 5000.0 + 40.0 * b + 3.0 * b * b; }};  // a line under-predicts it
  const double limit = 5000.0 + 40.0 * 90 + 3.0 * 90 * 90;
  auto o = budget(limit);
  o.resolution = 1 << 20;  // to the exact batch
  const auto r = find_max_batch(std::ref(f), o);
  EXPECT_EQ(r.largest_fit, 90);
  EXPECT_EQ(r.bound, "91 does not fit");
  EXPECT_LE(f.runs, 12);
}

TEST(BatchSearch, ABracketWithinTheResolutionEndsTheSearch) {
  FakeProbe f{[](int b) { return 100.0 * b; }};
  auto o = budget(100.0 * 1000);
  o.resolution = 10;  // +-10 %: 2, 8, 32, 128, 512, then 1000..1100 is close enough
  const auto r = find_max_batch(std::ref(f), o);
  EXPECT_GE(r.largest_fit, 900);
  EXPECT_LE(r.largest_fit, 1000);
  for (const auto& p : r.probes) EXPECT_TRUE(p.fits == (p.batch <= 1000)) << p.batch;
  EXPECT_LE(f.runs, 8);
}

TEST(BatchSearch, TheDataRowsCapTheSearch) {
  FakeProbe f{[](int b) { return 100.0 * b; }};
  const auto r = find_max_batch(std::ref(f), budget(1e9, 20));
  EXPECT_EQ(r.largest_fit, 20);
  EXPECT_NE(r.bound.find("the data has 20 rows"), std::string::npos) << r.bound;
}

TEST(BatchSearch, AFailedRunBoundsTheAnswer) {
  FakeProbe f{[](int b) { return 100.0 * b; }, /*fail_from=*/30};  // OOM before the budget is reached
  const auto r = find_max_batch(std::ref(f), budget(1e9));
  EXPECT_EQ(r.largest_fit, 29);
  EXPECT_EQ(r.bound, "30 failed: CUDA out of memory");
}

TEST(BatchSearch, NothingFitsWhenTheSmallestBatchIsOverBudget) {
  FakeProbe f{[](int b) { return 1000.0 * b; }};
  const auto r = find_max_batch(std::ref(f), budget(1500));
  EXPECT_EQ(r.largest_fit, 0);
  EXPECT_EQ(r.bound, "2 does not fit");
  EXPECT_EQ(f.runs, 1);
}

TEST(BatchSearch, ProbesPredictedFarOverTheBudgetAreNotRun) {
  // Steep memory: after 2 and 3 the line puts 4 at 210 bytes, over 1.25x the budget of 160: recorded, not run
  // (on the CPU such a run meets the OOM killer, not an exception).
  FakeProbe f{[](int b) { return b == 2 ? 100.0 : b == 3 ? 155.0 : 1e6; }};
  const auto r = find_max_batch(std::ref(f), budget(160));
  EXPECT_EQ(r.largest_fit, 3);
  EXPECT_EQ(r.bound, "4 is predicted to need more than 1.25x the budget");
  EXPECT_EQ(f.runs, 2);
  ASSERT_EQ(r.probes.size(), 3u);
  EXPECT_FALSE(r.probes[2].ran);
}
