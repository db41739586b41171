// --device for train and evaluate, parsed in one place.
#pragma once
#include <torch/torch.h>

#include <string>

namespace bt::train {

// cpu, cuda or cuda:N; fails (naming --device) on anything else and on cuda when libtorch sees no CUDA device.
torch::Device parse_device(const std::string& device);

}  // namespace bt::train
