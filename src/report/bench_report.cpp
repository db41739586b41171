#include "report/bench_report.h"

#include <algorithm>
#include <cstdio>

#include "common/error.h"
#include "report/plot.h"

namespace bt::report {

namespace {
std::string f1(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}
// Enough significant digits to compare rows (0.0146 vs 0.0151 TFLOP/s, not 0.01 vs 0.02).
std::string g3(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}
std::string spread(const BenchRow& r) {  // "85.1-90.2" over its runs
  const auto v = r.run_values();
  return f1(*std::min_element(v.begin(), v.end())) + "-" + f1(*std::max_element(v.begin(), v.end()));
}
std::string gb(uint64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", double(bytes) / double(1ull << 30));
  return b;
}
}  // namespace

bool clearly_faster(const BenchRow& a, const BenchRow& b) {
  const auto va = a.run_values(), vb = b.run_values();
  if (va.size() < size_t(kVerdictRuns) || vb.size() < size_t(kVerdictRuns)) return false;
  return *std::min_element(va.begin(), va.end()) > *std::max_element(vb.begin(), vb.end()) * (1 + kClearMargin);
}

std::optional<double> BenchRow::mfu() const {
  if (peak_flops <= 0) return std::nullopt;
  return tflops_per_s() * 1e12 / peak_flops;
}

const BenchRow* BenchReport::upper_bound() const {
  for (const auto& r : rows)
    if (r.in_memory && !r.precision_check) return &r;
  return nullptr;
}

double BenchReport::fraction_of_bound(const BenchRow& r) const {
  const BenchRow* ub = upper_bound();
  return ub && ub->samples_per_s > 0 ? r.samples_per_s / ub->samples_per_s : 0.0;
}

bool BenchReport::data_bound(const BenchRow& r) const {
  if (r.in_memory) return false;
  if (r.data_wait_percent > kDataBoundWaitPercent) return true;
  return upper_bound() && clearly_faster(*upper_bound(), r);
}

std::string BenchReport::markdown() const {
  std::string s = "| configuration | workers | media pipeline | samples/s | % of in-memory | data wait % | bound | "
                  "peak memory GB | steps add GB | TFLOP/s | MFU % |\n"
                  "|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|\n";
  for (const auto& r : rows) {
    s += str("| ", r.label, " | ", r.in_memory ? std::string("-") : std::to_string(r.workers), " | ",
             r.in_memory ? "-" : (r.media_pipeline ? "on" : "off"), " | ", f1(r.samples_per_s), " | ",
             upper_bound() ? f1(100.0 * fraction_of_bound(r)) : std::string("-"), " | ", f1(r.data_wait_percent),
             " | ", r.precision_check ? "precision check" : r.in_memory ? "upper bound" : (data_bound(r) ? "data" : "compute"),
             " | ", gb(r.peak_memory_bytes), " | ", gb(r.step_memory_bytes), " | ", g3(r.tflops_per_s()), " | ",
             r.mfu() ? f1(100 * *r.mfu()) : std::string("-"), " |\n");
  }
  return s;
}

std::string BenchReport::verdict() const {
  const BenchRow* best = nullptr;
  for (const auto& r : rows)
    if (!r.in_memory && (!best || r.samples_per_s > best->samples_per_s)) best = &r;
  if (!best) return "no loader configuration was measured";
  const std::string ub = upper_bound() ? str(", ", f1(100.0 * fraction_of_bound(*best)), " % of the in-memory upper bound") : "";
  if (best->data_wait_percent > kDataBoundWaitPercent)
    return str("data-bound: model waited ", f1(best->data_wait_percent), " % of the time (best loader configuration: ",
               best->label, ub, ")");
  if (data_bound(*best))  // hardly any wait, yet slower than the bound: the workers take the model's cores
    return str("data-bound (CPU contention): model waited ", f1(best->data_wait_percent),
               " % of the time but the loader's workers slow the steps down (best loader configuration: ", best->label,
               ub, ")");
  const bool measured = upper_bound() && best->run_values().size() >= size_t(kVerdictRuns) &&
                        upper_bound()->run_values().size() >= size_t(kVerdictRuns);
  return str("compute-bound: model waited ", f1(best->data_wait_percent), " % of the time (", best->label, ub,
             upper_bound() ? (measured ? "; no clear difference from it" : "; one run each: --repeats 2 or more "
                                                                          "compares them") : "", ")");
}

std::string BenchReport::precision_note() const {
  const BenchRow* ub = upper_bound();
  const BenchRow* other = nullptr;
  for (const auto& r : rows)
    if (r.precision_check) other = &r;
  if (!ub || !other || ub->bf16 == other->bf16 || ub->samples_per_s <= 0 || other->samples_per_s <= 0) return "";
  const BenchRow& bf16 = ub->bf16 ? *ub : *other;
  const BenchRow& fp32 = ub->bf16 ? *other : *ub;
  const double ratio = bf16.samples_per_s / fp32.samples_per_s;
  char r[32];
  std::snprintf(r, sizeof r, "%.2f", ratio);
  const size_t n = std::min(bf16.run_values().size(), fp32.run_values().size());
  const std::string measured = str("in memory: ", f1(bf16.samples_per_s), " vs ", f1(fp32.samples_per_s), " samples/s",
                                   n >= 2 ? str(", ", n, " runs each: ", spread(bf16), " vs ", spread(fp32)) : "");
  const std::string verdict = clearly_faster(bf16, fp32)   ? "train with --bf16 here"
                              : clearly_faster(fp32, bf16) ? "keep fp32 here (no --bf16)"
                              : n < size_t(kVerdictRuns)
                                  ? "no clear difference from one run each (--repeats 2 or more gives a verdict)"
                                  : str("no clear difference (the runs overlap or differ by less than ",
                                        int(kClearMargin * 100), " %): either precision");
  return str("precision: bf16 runs the model ", r, "x as fast as fp32 on this machine (", measured, "): ", verdict);
}

nlohmann::json BenchReport::to_json() const {
  nlohmann::json rs = nlohmann::json::array();
  for (const auto& r : rows)
    rs.push_back({{"label", r.label},
                  {"workers", r.workers},
                  {"media_pipeline", r.media_pipeline},
                  {"in_memory", r.in_memory},
                  {"precision_check", r.precision_check},
                  {"bf16", r.bf16},
                  {"samples_per_s", r.samples_per_s},
                  {"runs_samples_per_s", r.run_values()},
                  {"data_wait_percent", r.data_wait_percent},
                  {"fraction_of_in_memory", fraction_of_bound(r)},
                  {"data_bound", data_bound(r)},
                  {"paths", r.paths},
                  {"peak_memory_bytes", r.peak_memory_bytes},
                  {"step_memory_bytes", r.step_memory_bytes},
                  {"model_flops_per_sample", r.model_flops_per_sample},
                  {"tflops_per_s", r.tflops_per_s()},
                  {"mfu", r.mfu() ? nlohmann::json(*r.mfu()) : nlohmann::json(nullptr)},
                  {"peak_source", r.peak_source}});
  return {{"title", title}, {"rows", rs}, {"verdict", verdict()}, {"precision", precision_note()}};
}

void BenchReport::write_png(const std::filesystem::path& path) const {
  std::vector<Bar> bars;
  for (const auto& r : rows) bars.push_back({r.label, r.samples_per_s, r.in_memory});
  write_bar_chart_png(path, title, "samples/s", bars);
}

}  // namespace bt::report
