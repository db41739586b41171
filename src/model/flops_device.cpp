#include "model/flops_device.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <mutex>

#include "common/error.h"
#include "kernels/autocast.h"
#include "kernels/gemm/gemm.h"

#if defined(BT_TORCH_CUDA)
#include <ATen/cuda/CUDAContext.h>
#endif

namespace bt::model {

namespace {

// FLOP/s of an n^3 product through kernels::linear in this precision (bf16: under CPU autocast, as training runs it).
double measure_cpu_gemm(bool bf16) {
  constexpr int64_t n = 1024;
  torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::randn({n, n}), w = torch::randn({n, n});
  kernels::AutocastScope autocast(bf16, torch::kCPU);
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 4; ++i) {  // the first is a warm-up (oneDNN's kernel selection, first-touch pages)
    const auto t0 = std::chrono::steady_clock::now();
    const torch::Tensor y = kernels::linear(x, w, torch::Tensor());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0) best = std::min(best, s);
  }
  return 2.0 * n * n * n / best;
}

PeakFlops cpu_peak(MatmulPrecision p) {
  static std::mutex mu;
  static PeakFlops cached[2];  // fp32, bf16: measured once per process
  const bool bf16 = p == MatmulPrecision::kBf16;
  std::lock_guard<std::mutex> lock(mu);
  PeakFlops& c = cached[bf16 ? 1 : 0];
  if (c.flops_per_s == 0) {
    c.flops_per_s = measure_cpu_gemm(bf16);
    // The words runs have always reported ("kernels::linear": the kernel's name before it moved to src/kernels).
    c.source = str("measured: this CPU's ", bf16 ? "bf16" : "fp32", " GEMM (",
                   bf16 ? kernels::cpu_bf16_gemm_name() : kernels::cpu_gemm_name(),
                   ", 1024^3 through kernels::linear, best of 3, ", torch::get_num_threads(), " threads): ",
                   int(c.flops_per_s / 1e9), " GFLOP/s");
  }
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
