#include "model/device.h"

#include <algorithm>
#include <thread>

#include "common/cpu_isa.h"
#include "common/device_name.h"
#include "common/error.h"
#include "common/process_memory.h"
#include "common/runtime.h"
#include "kernels/gemm/gemm.h"
#include "model/api.h"

#if defined(BT_TORCH_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace bt::model {

torch::Device parse_device(const std::string& device) {
  if (device == "cpu") return torch::kCPU;
  if (names_cuda(device)) {
    if (!torch::cuda::is_available()) fail("--device ", device, ": this libtorch build sees no CUDA device (use --device cpu)");
    return torch::Device(device);
  }
  fail("--device must be cpu or cuda (got '", device, "')");
}

int torch_threads_for(int requested, int loader_workers, bool on_cpu, int64_t model_parameters,
                      int local_processes) {
  if (requested > 0) return requested;
  if (!on_cpu) return 0;
  const int cores = bt::available_cores() / std::max(1, local_processes);
  if (model_parameters >= kComputeBoundParameters) return std::max(1, cores);
  return std::max(1, cores - loader_workers);
}

int64_t parameter_numel(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

void configure_inference_threads(int requested, int loader_workers, const torch::Device& device,
                                 const torch::nn::Module& m) {
  if (device.is_cpu()) configure_torch_threads(torch_threads_for(requested, loader_workers, true, parameter_numel(m)));
}

namespace {
// The CUDA caching allocator's allocated bytes on d, now or at their peak (index 0 of its stat arrays:
// StatType::AGGREGATE, every pool); 0 off CUDA or without a CUDA libtorch.
uint64_t cuda_allocated_bytes([[maybe_unused]] const torch::Device& d, [[maybe_unused]] bool peak) {
#if defined(BT_TORCH_CUDA)
  if (d.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(d.has_index() ? d.index() : 0);
    return static_cast<uint64_t>(peak ? stats.allocated_bytes[0].peak : stats.allocated_bytes[0].current);
  }
#endif
  return 0;
}
}  // namespace

uint64_t memory_bytes(const torch::Device& device) {
  return device.is_cpu() ? rss_bytes() : cuda_allocated_bytes(device, false);
}

uint64_t peak_memory_bytes(const torch::Device& device) {
  return device.is_cpu() ? peak_rss_bytes() : cuda_allocated_bytes(device, true);
}

void reset_peak_memory(const torch::Device& device) {
  if (device.is_cpu()) reset_peak_rss();
#if defined(BT_TORCH_CUDA)
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.has_index() ? device.index() : 0);
#endif
}

// Here, not in kernels/gemm: the CLI reads it through the torch-free model/api.h.
std::string cpu_bf16_note() {
  const CpuIsa& isa = cpu_isa();
  if (isa.bf16_native) return "";
  const std::string why = isa.hardware_bf16 ? "ONEDNN_MAX_CPU_ISA=" + isa.cap + " caps this CPU's bf16"
                                            : "this CPU has no AVX512_BF16 or AMX-BF16";
  const std::string how = kernels::cpu_bf16_gemm_name() == "onednn_bf16"
                              ? "oneDNN's AVX-512 emulation of its bf16 GEMM"
                              : "bf16-rounded operands on float32 GEMMs";
  // The cost: docs/PERFORMANCE.md, "bf16 on a CPU without bf16" (small preset under ONEDNN_MAX_CPU_ISA=AVX2).
  return "note: bf16 is emulated here (" + why + "): " + how +
         " give native bf16's numerics at float32's speed at best (small preset: 1.0x float32's step time), so "
         "--bf16 saves no time on this CPU";
}

}  // namespace bt::model
