// libFuzzer target for the CPU peak cache (model/flops_peak.h, $XDG_CACHE_HOME/bridgetune/cpu_peak.json): a file in
// the user's folders that anything may have damaged. Whatever its bytes, cached_cpu_peak() returns none or a
// positive finite peak, never throws; store_cpu_peak() then rewrites the file, and the entry reads back as stored.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/flops_peak.h"

namespace {
const std::string& cache_file() {  // one file per fuzzing process, rewritten for every input
  static const std::string path = [] {
    const std::string dir = "/tmp/bt_fuzz_cpu_peak_" + std::to_string(getpid());
    std::filesystem::create_directories(dir);
    return dir + "/cpu_peak.json";
  }();
  return path;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using bt::model::CpuPeakKey;
  const CpuPeakKey key{"Some CPU @ 2.0GHz", "AVX2", "onednn sgemm", "fp32", 2};
  const std::string& path = cache_file();
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), size);
  const bt::model::PeakFlops p = bt::model::cached_cpu_peak(path, key);
  if (p.flops_per_s != 0 && !(std::isfinite(p.flops_per_s) && p.flops_per_s > 0)) std::abort();
  if (p.flops_per_s == 0 && !p.source.empty()) std::abort();
  if (!bt::model::store_cpu_peak(path, key, 121e9, "fuzz").empty()) std::abort();
  if (bt::model::cached_cpu_peak(path, key).flops_per_s != 121e9) std::abort();
  return 0;
}
