// The peak a run's MFU is measured against (model/flops_peak.h), for the device and precision it trains in.
// CUDA: the datasheet table by the device's name (cudaDeviceProp::name); float32 counts as tf32 where torch lets
// cuBLAS use TF32. CPU: no datasheet applies, so the GEMM rate is measured once per machine, on the path the model's
// Linear layers take (kernels::linear: oneDNN sgemm, or oneDNN bf16 under autocast; 1024^3, best of 12 after a
// warm-up, at torch's current thread count; ~0.2-0.8 s on 2 cores), and kept in the cache file of model/flops_peak.h
// per CPU model, instruction-set path (ONEDNN_MAX_CPU_ISA), kernel, precision and threads: every later run divides
// by the same figure, and peak_source says which it was (measured now, or cached and when). The CPU MFU is then "of
// what this CPU's GEMM reaches", not of a vendor figure.
#pragma once
#include <torch/torch.h>

#include "model/flops_peak.h"

namespace bt::model {

MatmulPrecision run_precision(const torch::Device& device, bool bf16, bool fp16);
PeakFlops device_peak_flops(const torch::Device& device, MatmulPrecision p);

}  // namespace bt::model
