// --device as the user writes it: cpu, cuda or cuda:N. The decisions taken before a torch::Device exists (--fp16's
// meaning, the media pipeline where possible) ask names_cuda(); model::parse_device builds the torch::Device from
// the same spelling and refuses anything else.
#pragma once
#include <string>

namespace bt {

inline bool names_cuda(const std::string& device) { return device == "cuda" || device.rfind("cuda:", 0) == 0; }

}  // namespace bt
