// Peak matmul throughput, the denominator of MFU (model FLOPs utilization = counted model FLOPs per second,
// model/flops.h, over the device's peak). On NVIDIA GPUs the datasheet's dense Tensor Core peak for the precision
// the GEMMs run in, found by the CUDA device name; on a CPU there is no such table: its GEMM rate is measured once
// per machine (model/flops_device.h) and kept in a cache file (below), so a peak is a property of the machine, not of
// the load one run happened to meet. Torch-free; the table and the cache's format live in flops_peak.cpp only.
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

// What a CPU peak is a peak of: one measurement serves every run with the same key (the CPU, its instruction-set
// path after ONEDNN_MAX_CPU_ISA, the GEMM kernel, the precision and torch's thread count).
struct CpuPeakKey {
  std::string cpu_model;  // /proc/cpuinfo's "model name" ("" when unknown)
  std::string isa;        // common/cpu_isa.h describe_cpu: "AVX-512, bf16 native (...), capped by ..."
  std::string kernel;     // kernels::cpu_gemm_name() / cpu_bf16_gemm_name()
  std::string precision;  // precision_name
  int threads = 1;
  std::string text() const;  // the cache's key: every field, in one line
};
// This machine's CPU model name, read once ("" when /proc/cpuinfo has none).
const std::string& cpu_model_name();

// The cache of measured CPU peaks: $XDG_CACHE_HOME/bridgetune/cpu_peak.json, else ~/.cache/bridgetune/cpu_peak.json
// ("" when neither variable is set: nothing is cached). One JSON object of key text -> {flops_per_s, how, when}.
std::string cpu_peak_cache_path();
// The peak cached for `key` in the file at `path`, its source saying it was measured earlier and where it is kept;
// flops_per_s 0 when there is none. A missing, unreadable or malformed file, or an entry that is not a positive
// number a CPU could reach, counts as none (it is measured again and the file rewritten).
PeakFlops cached_cpu_peak(const std::string& path, const CpuPeakKey& key);
// Adds (or replaces) `key`'s entry: flops_per_s and `how` it was measured, with the date; the file is rewritten
// atomically. Returns "" or why it could not be written (not an error: the run then says the peak is this run's).
std::string store_cpu_peak(const std::string& path, const CpuPeakKey& key, double flops_per_s, const std::string& how);

// The keys train_results.json and bench rows carry: tflops_per_s (model FLOPs per second per device, in 1e12),
// mfu (their fraction of the peak, 0..1; null without a peak), peak_tflops (null without) and peak_source.
nlohmann::json utilization_json(double model_flops_per_s, const PeakFlops& peak);

}  // namespace bt::model
