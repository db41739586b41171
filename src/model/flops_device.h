// The peak a run's MFU is measured against (model/flops_peak.h), for the device and precision it trains in.
// CUDA: the datasheet table by the device's name (cudaDeviceProp::name); float32 counts as tf32 where torch lets
// cuBLAS use TF32. CPU: no datasheet applies, so this process measures its own GEMM rate once per precision, on
// the path the model's Linear layers take (kernels::linear: oneDNN sgemm, or oneDNN bf16 under autocast; 1024^3, best
// of 3 after a warm-up, at torch's current thread count; ~0.05-0.2 s on 2 cores), and caches it. The CPU MFU is then
// "of what this CPU's GEMM reaches", not of a vendor figure.
#pragma once
#include <torch/torch.h>

#include "model/flops_peak.h"

namespace bt::model {

MatmulPrecision run_precision(const torch::Device& device, bool bf16, bool fp16);
PeakFlops device_peak_flops(const torch::Device& device, MatmulPrecision p);

}  // namespace bt::model
