#include "model/flops_peak.h"

#include <cctype>
#include <string>
#include <vector>

namespace bt::model {

namespace {

// Dense peaks in TFLOP/s per GPU, from NVIDIA's datasheets, whose Tensor Core figures are quoted "with sparsity":
// halved here (dense = sparse / 2). fp16 equals bf16 on every part listed. Names are matched in this order (the
// first entry all of whose words the device name contains), so the specific variants come before the plain name.
struct GpuPeak {
  std::vector<const char*> words;
  double bf16, tf32, fp32;
  const char* source;
};
const std::vector<GpuPeak>& gpu_table() {
  static const std::vector<GpuPeak> table = {
      // H100 datasheet (nvidia.com/en-us/data-center/h100, 2023): SXM BF16 1,979 / TF32 989 (sparse), FP32 67;
      // PCIe 1,513 / 756, FP32 51; NVL 1,671 / 835, FP32 60 (per GPU).
      {{"H100", "PCIe"}, 756.5, 378, 51, "NVIDIA H100 PCIe datasheet"},
      {{"H100", "NVL"}, 835.5, 417.5, 60, "NVIDIA H100 NVL datasheet"},
      // H200 datasheet (nvidia.com/en-us/data-center/h200, 2024): SXM as the H100 SXM; NVL as the H100 NVL. GH200
      // (Grace Hopper superchip datasheet): the H100 SXM's compute.
      {{"H200", "NVL"}, 835.5, 417.5, 60, "NVIDIA H200 NVL datasheet"},
      {{"H200"}, 989, 494, 67, "NVIDIA H200 SXM datasheet"},
      {{"H100"}, 989, 494, 67, "NVIDIA H100 SXM datasheet"},
      // A100 datasheet (nvidia.com/en-us/data-center/a100, 2021): BF16 312, TF32 156 (dense), FP32 19.5; SXM and PCIe.
      {{"A100"}, 312, 156, 19.5, "NVIDIA A100 datasheet"},
      // L40S datasheet (2023): BF16 733 / TF32 366 (sparse), FP32 91.6. L4 datasheet (2023): 242 / 120, FP32 30.3.
      {{"L40S"}, 366.5, 183, 91.6, "NVIDIA L40S datasheet"},
      {{"L4"}, 121, 60, 30.3, "NVIDIA L4 datasheet"},
  };
  return table;
}

bool contains_all(const std::string& name, const std::vector<const char*>& words) {
  for (const char* w : words) {
    const size_t at = name.find(w);
    if (at == std::string::npos) return false;
    // "L4" must not match "L40S": a word ends at the name's end or before a non-alphanumeric character.
    const size_t end = at + std::char_traits<char>::length(w);
    if (end < name.size() && std::isalnum(static_cast<unsigned char>(name[end]))) return false;
  }
  return true;
}

}  // namespace

const char* precision_name(MatmulPrecision p) {
  switch (p) {
    case MatmulPrecision::kTf32: return "tf32";
    case MatmulPrecision::kBf16: return "bf16";
    case MatmulPrecision::kFp16: return "fp16";
    default: return "fp32";
  }
}

PeakFlops gpu_peak_flops(const std::string& device_name, MatmulPrecision p) {
  for (const GpuPeak& g : gpu_table()) {
    if (!contains_all(device_name, g.words)) continue;
    const double tflops = p == MatmulPrecision::kBf16 || p == MatmulPrecision::kFp16 ? g.bf16
                          : p == MatmulPrecision::kTf32                              ? g.tf32
                                                                                     : g.fp32;
    return {tflops * 1e12, std::string(g.source) + ", " + precision_name(p) + " dense"};
  }
  return {0, "no peak known for GPU '" + device_name + "' (model/flops_peak.cpp's table)"};
}

nlohmann::json utilization_json(double model_flops_per_s, const PeakFlops& peak) {
  const bool known = peak.flops_per_s > 0;
  return {{"tflops_per_s", model_flops_per_s / 1e12},
          {"mfu", known ? nlohmann::json(model_flops_per_s / peak.flops_per_s) : nlohmann::json(nullptr)},
          {"peak_tflops", known ? nlohmann::json(peak.flops_per_s / 1e12) : nlohmann::json(nullptr)},
          {"peak_source", peak.source}};
}

}  // namespace bt::model
