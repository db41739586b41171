#include "model/device.h"

#include <algorithm>
#include <thread>

#include "common/device_name.h"
#include "common/error.h"

namespace bt::model {

torch::Device parse_device(const std::string& device) {
  if (device == "cpu") return torch::kCPU;
  if (names_cuda(device)) {
    if (!torch::cuda::is_available()) fail("--device ", device, ": this libtorch build sees no CUDA device (use --device cpu)");
    return torch::Device(device);
  }
  fail("--device must be cpu or cuda (got '", device, "')");
}

int torch_threads_for(int requested, int loader_workers, const torch::Device& device) {
  if (requested > 0) return requested;
  if (!device.is_cpu()) return 0;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()) - loader_workers);
}

}  // namespace bt::model
