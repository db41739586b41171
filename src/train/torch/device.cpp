#include "train/torch/device.h"

#include "common/error.h"

namespace bt::train {

torch::Device parse_device(const std::string& device) {
  if (device == "cpu") return torch::kCPU;
  if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
    if (!torch::cuda::is_available()) fail("--device ", device, ": this libtorch build sees no CUDA device (use --device cpu)");
    return torch::Device(device);
  }
  fail("--device must be cpu or cuda (got '", device, "')");
}

}  // namespace bt::train
