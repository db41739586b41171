// The report of `bridgetune bench`: one row per configuration (loader workers x media pipeline, plus the
// in-memory upper bound), as a markdown table, JSON and a PNG bar chart, and the verdict line naming the
// bottleneck. A run is data-bound when its step loop waited for data more than kDataBoundWaitPercent of the
// time, or when it is clearly slower than the in-memory upper bound (the loader's workers take the model's cores).
// On CPU the in-memory bound is also measured in the other precision (fp32 / bf16), and precision_note() says which
// is faster here. "Clearly" (clearly_faster): each row measured kVerdictRuns times or more (--repeats) and the
// slower row's fastest run more than kClearMargin below the faster row's slowest, i.e. a gap above the spread of
// the runs themselves; otherwise the report says "no clear difference". Every row says how much memory its steps
// took, and the model FLOPs per second it reached (TFLOP/s, MFU).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bt::report {

inline constexpr double kDataBoundWaitPercent = 3.0;
inline constexpr int kVerdictRuns = 2;
inline constexpr double kClearMargin = 0.03;

struct BenchRow {
  std::string label;  // "workers 2", "workers 2 + GPU media", "in-memory batches"
  int workers = 0;
  bool media_pipeline = false;
  bool in_memory = false;
  double samples_per_s = 0;
  double data_wait_percent = 0;
  std::string paths;  // the fast paths the run took (TrainSummary::op_paths plus the media decode)
  // An in-memory row in the other precision than the loader rows (CPU: fp32 vs bf16), to say which one this
  // machine runs faster; never the upper bound.
  bool precision_check = false;
  bool bf16 = false;  // in-memory rows: the precision they ran in
  // The step loop's memory (CPU: resident, CUDA: allocated; the most over the row's runs), in bytes: its peak,
  // and what the steps added above the loaded model, optimizer state and data.
  uint64_t peak_memory_bytes = 0, step_memory_bytes = 0;
  // The work (model/flops.h; train_results.json's keys of the row's run): model FLOPs per sample (forward +
  // backward at its batches' shapes) and the device's peak (model/flops_peak.h: 0 when none is known) with its
  // source. tflops_per_s and mfu follow from them at the row's samples/s.
  double model_flops_per_sample = 0, peak_flops = 0;
  std::string peak_source;
  // Each repeat's samples/s (samples_per_s is their median); empty: the one figure samples_per_s.
  std::vector<double> runs = {};
  double tflops_per_s() const { return model_flops_per_sample * samples_per_s / 1e12; }
  std::optional<double> mfu() const;  // of the peak, 0..1; none without a peak
  std::vector<double> run_values() const { return runs.empty() ? std::vector<double>{samples_per_s} : runs; }
};

// Whether `a` is faster than `b` beyond the runs' own spread (see above).
bool clearly_faster(const BenchRow& a, const BenchRow& b);

struct BenchReport {
  std::string title;  // preset, batch, image size, device
  std::vector<BenchRow> rows;

  const BenchRow* upper_bound() const;
  double fraction_of_bound(const BenchRow& r) const;  // 0 when there is no bound
  bool data_bound(const BenchRow& r) const;
  std::string markdown() const;
  // About the fastest loader row: "data-bound: model waited X % of the time (...)" or "compute-bound: ...".
  std::string verdict() const;
  // With a precision_check row: "bf16 runs the model X.XXx as fast as fp32 on this machine: ..." ("" without).
  std::string precision_note() const;
  nlohmann::json to_json() const;
  void write_png(const std::filesystem::path& path) const;
};

}  // namespace bt::report
