#include "model/device.h"

#include <algorithm>
#include <thread>

#include "common/device_name.h"
#include "common/error.h"
#include "common/process_memory.h"

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

int torch_threads_for(int requested, int loader_workers, const torch::Device& device, int64_t inference_parameters) {
  if (requested > 0) return requested;
  if (!device.is_cpu()) return 0;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (inference_parameters >= kComputeBoundParameters) return std::max(1, cores);
  return std::max(1, cores - loader_workers);
}

int64_t parameter_numel(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

#if defined(BT_TORCH_CUDA)
namespace {
// The allocator's aggregate byte counts (index 0 of its stat arrays: StatType::AGGREGATE, every pool).
auto cuda_stats(const torch::Device& d) {  // DeviceStats (its namespace moved in torch 2.x)
  return c10::cuda::CUDACachingAllocator::getDeviceStats(d.has_index() ? d.index() : 0);
}
}  // namespace
#endif

uint64_t memory_bytes(const torch::Device& device) {
  if (device.is_cpu()) return rss_bytes();
#if defined(BT_TORCH_CUDA)
  if (device.is_cuda()) return static_cast<uint64_t>(cuda_stats(device).allocated_bytes[0].current);
#endif
  return 0;
}

uint64_t peak_memory_bytes(const torch::Device& device) {
  if (device.is_cpu()) return peak_rss_bytes();
#if defined(BT_TORCH_CUDA)
  if (device.is_cuda()) return static_cast<uint64_t>(cuda_stats(device).allocated_bytes[0].peak);
#endif
  return 0;
}

void reset_peak_memory(const torch::Device& device) {
  if (device.is_cpu()) reset_peak_rss();
#if defined(BT_TORCH_CUDA)
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.has_index() ? device.index() : 0);
#endif
}

}  // namespace bt::model
