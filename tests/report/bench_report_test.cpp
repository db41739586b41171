#include <gtest/gtest.h>

#include "report/bench_report.h"

using namespace bt::report;

TEST(BenchReport, VerdictNamesTheBottleneck) {
  BenchReport r;
  r.rows = {{"workers 0", 0, false, false, 30, 40.0}, {"in-memory batches", 0, false, true, 100, 0}};
  EXPECT_TRUE(r.data_bound(r.rows[0]));
  EXPECT_EQ(r.verdict().rfind("data-bound: model waited 40.0 % of the time", 0), 0u) << r.verdict();
  r.rows.push_back({"workers 2", 2, false, false, 98, 1.0});
  EXPECT_EQ(r.verdict().rfind("compute-bound: model waited 1.0 %", 0), 0u) << r.verdict();
  r.rows[2].samples_per_s = 80;  // little wait but far below the bound
  EXPECT_EQ(r.verdict().rfind("data-bound (CPU contention)", 0), 0u) << r.verdict();
  const std::string md = r.markdown();
  EXPECT_NE(md.find("| workers 0 | 0 | off | 30.0 | 30.0 | 40.0 | data |"), std::string::npos) << md;
  EXPECT_NE(md.find("| in-memory batches | - | - | 100.0 | 100.0 | 0.0 | upper bound |"), std::string::npos) << md;
  auto j = r.to_json();
  EXPECT_EQ(j["rows"].size(), 3u);
  EXPECT_TRUE(j["rows"][0]["data_bound"].get<bool>());
}

TEST(BenchReport, WithoutUpperBoundOnlyWaitDecides) {
  BenchReport r;
  r.rows = {{"workers 1", 1, false, false, 50, 2.0}};
  EXPECT_FALSE(r.data_bound(r.rows[0]));
  EXPECT_EQ(r.verdict().rfind("compute-bound", 0), 0u);
}
