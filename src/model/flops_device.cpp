#include "model/flops_device.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>

#include "common/cpu_isa.h"
#include "common/error.h"
#include "kernels/autocast.h"
#include "kernels/gemm/gemm.h"

#if defined(BT_TORCH_CUDA)
#include <ATen/cuda/CUDAContext.h>
#endif

namespace bt::model {

namespace {

// Measured once per machine (the cache keeps it), so it can take its time: the best of kTimedRuns after a warm-up.
// The best, not the mean: another process's load only ever slows a run down.
constexpr int kTimedRuns = 12;

// FLOP/s of an n^3 product through kernels::linear in this precision (bf16: under CPU autocast, as training runs it).
double measure_cpu_gemm(bool bf16) {
  constexpr int64_t n = 1024;
  torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::randn({n, n}), w = torch::randn({n, n});
  kernels::AutocastScope autocast(bf16, torch::kCPU);
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i <= kTimedRuns; ++i) {  // the first is a warm-up (oneDNN's kernel selection, first-touch pages)
    const auto t0 = std::chrono::steady_clock::now();
    const torch::Tensor y = kernels::linear(x, w, torch::Tensor());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0) best = std::min(best, s);
  }
  return 2.0 * n * n * n / best;
}

// The peak of this machine for the key (CPU, ISA path, kernel, precision, threads): the cache file's when it has one
// (model/flops_peak.h), else measured now and stored there; once per process either way.
PeakFlops cpu_peak(MatmulPrecision p) {
  static std::mutex mu;
  static std::map<std::string, PeakFlops> known;
  const bool bf16 = p == MatmulPrecision::kBf16;
  const CpuPeakKey key{cpu_model_name(), describe_cpu(cpu_isa()),
                       bf16 ? kernels::cpu_bf16_gemm_name() : kernels::cpu_gemm_name(), bf16 ? "bf16" : "fp32",
                       torch::get_num_threads()};
  std::lock_guard<std::mutex> lock(mu);
  if (const auto it = known.find(key.text()); it != known.end()) return it->second;
  const std::string path = cpu_peak_cache_path();
  PeakFlops c = cached_cpu_peak(path, key);
  if (c.flops_per_s == 0) {
    c.flops_per_s = measure_cpu_gemm(bf16);
    const std::string how = str("this CPU's ", key.precision, " GEMM (", key.kernel, ", 1024^3 through kernels::linear, "
                                "best of ", kTimedRuns, ", ", key.threads, " threads)");
    const std::string why = store_cpu_peak(path, key, c.flops_per_s, how);
    c.source = str("measured now: ", how, ": ", int(c.flops_per_s / 1e9), " GFLOP/s",
                   why.empty() ? str(", cached in ", path, " for the next runs") : str(" (not cached: ", why, ")"));
  }
  known[key.text()] = c;
  return c;
}

}  // namespace

MatmulPrecision run_precision([[maybe_unused]] const torch::Device& device, bool bf16, bool fp16) {
  if (fp16) return MatmulPrecision::kFp16;
  if (bf16) return MatmulPrecision::kBf16;
#if defined(BT_TORCH_CUDA)
  if (device.is_cuda() && at::globalContext().allowTF32CuBLAS()) return MatmulPrecision::kTf32;
#endif
  return MatmulPrecision::kFp32;
}

PeakFlops device_peak_flops(const torch::Device& device, MatmulPrecision p) {
  if (device.is_cpu()) return cpu_peak(p);
#if defined(BT_TORCH_CUDA)
  if (device.is_cuda()) {
    const int index = device.has_index() ? device.index() : at::cuda::current_device();
    return gpu_peak_flops(at::cuda::getDeviceProperties(index)->name, p);
  }
#endif
  return {0, str("no peak known for device ", device.str(), " (built without the CUDA kernels: no device name)")};
}

}  // namespace bt::model
