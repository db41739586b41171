// Peak matmul throughput, the denominator of MFU (model FLOPs utilization = counted model FLOPs per second,
// model/flops.h, over the device's peak). On NVIDIA GPUs the datasheet's dense Tensor Core peak for the precision
// the GEMMs run in, found by the CUDA device name; on a CPU there is no such table: the run measures its GEMM rate
// (model/flops_device.h). Torch-free; the table lives in flops_peak.cpp only.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace bt::model {

// The precision the model's GEMMs run in: fp32 (CUDA without TF32, CPU float32), tf32 (CUDA float32 with TF32
// allowed for cuBLAS), bf16 / fp16 (autocast).
enum class MatmulPrecision { kFp32, kTf32, kBf16, kFp16 };
const char* precision_name(MatmulPrecision p);  // "fp32", "tf32", "bf16", "fp16"

struct PeakFlops {
  double flops_per_s = 0;  // 0: not known (then MFU is not given)
  std::string source;      // where the figure comes from, or why there is none
};

// The dense (no 2:4 sparsity) peak of the GPU called `device_name` (cudaDeviceProp::name, e.g. "NVIDIA H100 80GB
// HBM3", "NVIDIA H200", "NVIDIA A100-SXM4-80GB") in precision p; flops_per_s 0 for a GPU not in the table.
PeakFlops gpu_peak_flops(const std::string& device_name, MatmulPrecision p);

// The keys train_results.json and bench rows carry: tflops_per_s (model FLOPs per second per device, in 1e12),
// mfu (their fraction of the peak, 0..1; null without a peak), peak_tflops (null without) and peak_source.
nlohmann::json utilization_json(double model_flops_per_s, const PeakFlops& peak);

}  // namespace bt::model
