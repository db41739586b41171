// The generator states dropout draws from: the CPU's and, on a CUDA device, that device's. Saved before a forward
// and restored to run it again with the same dropout masks (gradient checkpointing's recomputation, the second
// pass of exact contrastive accumulation).
#pragma once
#include <torch/torch.h>

#include <optional>

namespace bt::model {

struct RngState {
  torch::Tensor cpu, cuda;
  std::optional<torch::Device> cuda_device;  // the CUDA device whose generator is kept (none for CPU work)

  static RngState save(const torch::Device& device);
  void restore() const;
};

}  // namespace bt::model
