#include "model/flops_peak.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/file_gate.h"
#include "common/json.h"

namespace bt::model {

namespace {

// Dense peaks in TFLOP/s per GPU, from NVIDIA's datasheets, whose Tensor Core figures are quoted "with sparsity":
// halved here (dense = sparse / 2). fp16 equals bf16 on every part listed. Names are matched in this order (the
// first entry all of whose words the device name contains), so the specific variants come before the plain name.
struct GpuPeak {
  std::vector<const char*> words;
  double bf16, tf32, fp32;
  const char* source;
};
const std::vector<GpuPeak>& gpu_table() {
  static const std::vector<GpuPeak> table = {
      // H100 datasheet (nvidia.com/en-us/data-center/h100, 2023): SXM BF16 1,979 / TF32 989 (sparse), FP32 67;
      // PCIe 1,513 / 756, FP32 51; NVL 1,671 / 835, FP32 60 (per GPU).
      {{"H100", "PCIe"}, 756.5, 378, 51, "NVIDIA H100 PCIe datasheet"},
      {{"H100", "NVL"}, 835.5, 417.5, 60, "NVIDIA H100 NVL datasheet"},
      // H200 datasheet (nvidia.com/en-us/data-center/h200, 2024): SXM as the H100 SXM; NVL as the H100 NVL. GH200
      // (Grace Hopper superchip datasheet): the H100 SXM's compute.
      {{"H200", "NVL"}, 835.5, 417.5, 60, "NVIDIA H200 NVL datasheet"},
      {{"H200"}, 989, 494, 67, "NVIDIA H200 SXM datasheet"},
      {{"H100"}, 989, 494, 67, "NVIDIA H100 SXM datasheet"},
      // A100 datasheet (nvidia.com/en-us/data-center/a100, 2021): BF16 312, TF32 156 (dense), FP32 19.5; SXM and PCIe.
      {{"A100"}, 312, 156, 19.5, "NVIDIA A100 datasheet"},
      // L40S datasheet (2023): BF16 733 / TF32 366 (sparse), FP32 91.6. L4 datasheet (2023): 242 / 120, FP32 30.3.
      {{"L40S"}, 366.5, 183, 91.6, "NVIDIA L40S datasheet"},
      {{"L4"}, 121, 60, 30.3, "NVIDIA L4 datasheet"},
  };
  return table;
}

bool contains_all(const std::string& name, const std::vector<const char*>& words) {
  for (const char* w : words) {
    const size_t at = name.find(w);
    if (at == std::string::npos) return false;
    // "L4" must not match "L40S": a word ends at the name's end or before a non-alphanumeric character.
    const size_t end = at + std::char_traits<char>::length(w);
    if (end < name.size() && std::isalnum(static_cast<unsigned char>(name[end]))) return false;
  }
  return true;
}

}  // namespace

const char* precision_name(MatmulPrecision p) {
  switch (p) {
    case MatmulPrecision::kTf32: return "tf32";
    case MatmulPrecision::kBf16: return "bf16";
    case MatmulPrecision::kFp16: return "fp16";
    default: return "fp32";
  }
}

PeakFlops gpu_peak_flops(const std::string& device_name, MatmulPrecision p) {
  for (const GpuPeak& g : gpu_table()) {
    if (!contains_all(device_name, g.words)) continue;
    const double tflops = p == MatmulPrecision::kBf16 || p == MatmulPrecision::kFp16 ? g.bf16
                          : p == MatmulPrecision::kTf32                              ? g.tf32
                                                                                     : g.fp32;
    return {tflops * 1e12, std::string(g.source) + ", " + precision_name(p) + " dense"};
  }
  return {0, "no peak known for GPU '" + device_name + "' (model/flops_peak.cpp's table)"};
}

std::string CpuPeakKey::text() const {
  return str(cpu_model.empty() ? std::string("unknown CPU") : cpu_model, " | ", isa, " | ", kernel, " | ", precision,
             " | ", threads, threads == 1 ? " thread" : " threads");
}

const std::string& cpu_model_name() {
  static const std::string name = [] {
    std::vector<uint8_t> bytes;
    if (!try_read_regular_file("/proc/cpuinfo", bytes, 16u << 20).empty()) return std::string();
    std::istringstream in(std::string(bytes.begin(), bytes.end()));
    for (std::string line; std::getline(in, line);)
      if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
        std::string v = line.substr(line.find(':') + 1);
        const size_t a = v.find_first_not_of(' ');
        return a == std::string::npos ? std::string() : v.substr(a);
      }
    return std::string();
  }();
  return name;
}

std::string cpu_peak_cache_path() {
  namespace fs = std::filesystem;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return (fs::path(xdg) / "bridgetune" / "cpu_peak.json").string();
  const char* home = std::getenv("HOME");
  if (home && *home == '/') return (fs::path(home) / ".cache" / "bridgetune" / "cpu_peak.json").string();
  return "";
}

namespace {
constexpr uint64_t kMaxCacheBytes = 1 << 20;  // a few hundred bytes per machine configuration
// Above this no CPU's GEMM runs (1 PFLOP/s; large servers reach a few TFLOP/s): such an entry is damage, not a peak.
constexpr double kMaxPlausibleCpuPeak = 1e15;

// The cache file's object, or an empty one for a missing or malformed file (it is a cache: rebuilt, never fatal).
nlohmann::json read_cache(const std::string& path) {
  std::vector<uint8_t> bytes;
  if (path.empty() || !try_read_regular_file(path, bytes, kMaxCacheBytes).empty()) return nlohmann::json::object();
  nlohmann::json j = try_parse_json(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  return j.is_object() && j.value("format", "") == "bridgetune-cpu-peak-1" && j.contains("peaks") &&
                 j["peaks"].is_object()
             ? j
             : nlohmann::json::object();
}
}  // namespace

PeakFlops cached_cpu_peak(const std::string& path, const CpuPeakKey& key) {
  const nlohmann::json j = read_cache(path);
  if (!j.contains("peaks") || !j["peaks"].contains(key.text())) return {};
  const nlohmann::json& e = j["peaks"][key.text()];
  if (!e.is_object() || !e.contains("flops_per_s") || !e["flops_per_s"].is_number()) return {};
  const double v = e["flops_per_s"].get<double>();
  if (!std::isfinite(v) || v <= 0 || v > kMaxPlausibleCpuPeak) return {};
  const std::string how = e.contains("how") && e["how"].is_string() ? e["how"].get<std::string>() : "";
  const std::string when = e.contains("when") && e["when"].is_string() ? e["when"].get<std::string>() : "";
  return {v, str("cached: ", how, ": ", int(v / 1e9), " GFLOP/s, measured ", when, " (", path,
                 "; delete it to measure again)")};
}

std::string store_cpu_peak(const std::string& path, const CpuPeakKey& key, double flops_per_s, const std::string& how) {
  if (path.empty()) return "no cache folder ($XDG_CACHE_HOME and $HOME are unset)";
  nlohmann::json j = read_cache(path);
  j["format"] = "bridgetune-cpu-peak-1";
  char when[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &utc);
  j["peaks"][key.text()] = {{"flops_per_s", flops_per_s}, {"how", how}, {"when", when}};
  try {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    write_file_atomic(path, j.dump(1) + "\n");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

nlohmann::json utilization_json(double model_flops_per_s, const PeakFlops& peak) {
  const bool known = peak.flops_per_s > 0;
  return {{"tflops_per_s", model_flops_per_s / 1e12},
          {"mfu", known ? nlohmann::json(model_flops_per_s / peak.flops_per_s) : nlohmann::json(nullptr)},
          {"peak_tflops", known ? nlohmann::json(peak.flops_per_s / 1e12) : nlohmann::json(nullptr)},
          {"peak_source", peak.source}};
}

}  // namespace bt::model
