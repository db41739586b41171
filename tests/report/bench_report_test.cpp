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
  r.rows[2].samples_per_s = 80;  // little wait but far below the bound: from one run each, no verdict
  EXPECT_NE(r.verdict().find("one run each: --repeats 2 or more compares them"), std::string::npos) << r.verdict();
  r.rows[2].runs = {78, 80, 82};  // repeats clearly below the bound's
  r.rows[1].runs = {99, 100, 101};
  EXPECT_EQ(r.verdict().rfind("data-bound (CPU contention)", 0), 0u) << r.verdict();
  r.rows[2].runs = {80, 80, 99.5};  // the runs overlap the bound's: no clear difference
  EXPECT_NE(r.verdict().find("no clear difference from it"), std::string::npos) << r.verdict();
  const std::string md = r.markdown();
  EXPECT_NE(md.find("| workers 0 | 0 | off | 30.0 | 30.0 | 40.0 | data |"), std::string::npos) << md;
  EXPECT_NE(md.find("| in-memory batches | - | - | 100.0 | 100.0 | 0.0 | upper bound |"), std::string::npos) << md;
  auto j = r.to_json();
  EXPECT_EQ(j["rows"].size(), 3u);
  EXPECT_TRUE(j["rows"][0]["data_bound"].get<bool>());
}

// On CPU the in-memory bound is measured in both precisions: the other one is a check, not the bound, and the
// note says which is faster.
TEST(BenchReport, PrecisionCheckSaysWhichPrecisionIsFaster) {
  BenchReport r;
  r.rows = {{"in-memory batches", 0, false, true, 10, 0}, {"workers 2", 2, false, false, 9, 1.0}};
  EXPECT_EQ(r.precision_note(), "");
  BenchRow bf16{"in-memory batches, bf16", 0, false, true, 35, 0};
  bf16.precision_check = bf16.bf16 = true;
  r.rows.insert(r.rows.begin() + 1, bf16);
  EXPECT_EQ(r.upper_bound(), &r.rows[0]);
  EXPECT_NEAR(r.fraction_of_bound(r.rows[2]), 0.9, 1e-12);
  EXPECT_EQ(r.precision_note(), "precision: bf16 runs the model 3.50x as fast as fp32 on this machine (in memory: "
                                "35.0 vs 10.0 samples/s): no clear difference from one run each (--repeats 2 or "
                                "more gives a verdict)");
  r.rows[0].runs = {9.5, 10, 10.5};
  r.rows[1].runs = {34, 35, 36};
  EXPECT_EQ(r.precision_note(), "precision: bf16 runs the model 3.50x as fast as fp32 on this machine (in memory: "
                                "35.0 vs 10.0 samples/s, 3 runs each: 34.0-36.0 vs 9.5-10.5): train with --bf16 here");
  EXPECT_NE(r.markdown().find("| in-memory batches, bf16 | - | - | 35.0 | 350.0 | 0.0 | precision check |"),
            std::string::npos) << r.markdown();
  r.rows[1].samples_per_s = 5;
  r.rows[1].runs = {4.9, 5, 5.1};
  EXPECT_NE(r.precision_note().find("0.50x as fast as fp32 on this machine (in memory: 5.0 vs 10.0 samples/s, 3 runs "
                                    "each: 4.9-5.1 vs 9.5-10.5): keep fp32"),
            std::string::npos) << r.precision_note();
  // Issue 57: 1.04x from runs whose spread is larger is no verdict (bench once recommended --bf16 from it).
  r.rows[1].samples_per_s = 10.4;
  r.rows[1].runs = {9.8, 10.4, 10.9};
  EXPECT_NE(r.precision_note().find("1.04x as fast as fp32"), std::string::npos) << r.precision_note();
  EXPECT_NE(r.precision_note().find("no clear difference (the runs overlap or differ by less than 3 %)"),
            std::string::npos) << r.precision_note();
  EXPECT_EQ(r.to_json()["precision"], r.precision_note());
}

TEST(BenchReport, WithoutUpperBoundOnlyWaitDecides) {
  BenchReport r;
  r.rows = {{"workers 1", 1, false, false, 50, 2.0}};
  EXPECT_FALSE(r.data_bound(r.rows[0]));
  EXPECT_EQ(r.verdict().rfind("compute-bound", 0), 0u);
}

// Every row carries the memory its steps took: the peak, and what the steps added above the loaded model.
TEST(BenchReport, RowsReportTheirMemory) {
  BenchReport r;
  BenchRow row{"in-memory batches", 0, false, true, 10, 0};
  row.peak_memory_bytes = 3ull << 30;
  row.step_memory_bytes = 1536ull << 20;
  r.rows = {row};
  EXPECT_NE(r.markdown().find("| upper bound | 3.00 | 1.50 |"), std::string::npos) << r.markdown();
  EXPECT_EQ(r.to_json()["rows"][0]["peak_memory_bytes"].get<uint64_t>(), 3ull << 30);
  EXPECT_EQ(r.to_json()["rows"][0]["step_memory_bytes"].get<uint64_t>(), 1536ull << 20);
}

// Every row carries the model FLOPs per second it reached (model/flops.h's count at its samples/s) and, where the
// device's peak is known, their fraction of it (MFU); without a peak MFU is "-" / null.
TEST(BenchReport, RowsReportTheirWork) {
  BenchReport r;
  BenchRow row{"in-memory batches", 0, false, true, 10, 0};
  row.model_flops_per_sample = 5e12;
  row.peak_flops = 100e12;
  row.peak_source = "NVIDIA H200 SXM datasheet, bf16 dense";
  BenchRow cpu{"workers 2", 2, false, false, 4, 1.0};
  cpu.model_flops_per_sample = 5e12;
  r.rows = {row, cpu};
  EXPECT_DOUBLE_EQ(r.rows[0].tflops_per_s(), 50);
  EXPECT_DOUBLE_EQ(*r.rows[0].mfu(), 0.5);
  EXPECT_FALSE(r.rows[1].mfu());
  const std::string md = r.markdown();
  EXPECT_NE(md.find("| TFLOP/s | MFU % |"), std::string::npos) << md;
  EXPECT_NE(md.find("| upper bound | 0.00 | 0.00 | 50 | 50.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 20 | - |"), std::string::npos) << md;
  const auto j = r.to_json()["rows"];
  EXPECT_DOUBLE_EQ(j[0]["tflops_per_s"].get<double>(), 50);
  EXPECT_DOUBLE_EQ(j[0]["mfu"].get<double>(), 0.5);
  EXPECT_EQ(j[0]["peak_source"], row.peak_source);
  EXPECT_DOUBLE_EQ(j[1]["model_flops_per_sample"].get<double>(), 5e12);
  EXPECT_TRUE(j[1]["mfu"].is_null());
  // Enough digits to compare rows (issue 57: 0.01458 vs 0.01509 TFLOP/s once showed as 0.01 vs 0.02).
  r.rows[0].model_flops_per_sample = 1.458e9, r.rows[1].model_flops_per_sample = 3.7725e9;
  EXPECT_NE(r.markdown().find("| 0.0146 |"), std::string::npos) << r.markdown();
  EXPECT_NE(r.markdown().find("| 0.0151 |"), std::string::npos) << r.markdown();
}
