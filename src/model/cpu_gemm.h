// The one place that decides which GEMM runs the model's float32 products on the CPU: Linear layers
// (y = x W^T + b) and attention's two batched products (scores = q k^T / sqrt(d), context = p v).
// CPU float32 outside autocast: oneDNN's sgemm (libdnnl, which Debian's libtorch links) as autograd functions
// with their own backward GEMMs. Linear runs each GEMM on all of torch's OpenMP threads; the batched products
// run one single-threaded GEMM per (batch, head) matrix across those threads, reading q, k, v in place through
// their strides (no contiguous copies) and folding the 1/sqrt(d) into the GEMM. libtorch's own float32 path there is
// OpenBLAS, which bridgetune pins to one thread (model/runtime.cpp: its pool would oversubscribe torch's), and
// bmm's per-matrix loop. Linear under CPU autocast to bf16: oneDNN's bf16 GEMM with autocast's bf16 operands and
// result, the float32 inputs' gradients kept in float32 (cpu_gemm.cpp says why). Everything else (CUDA, half,
// autocast's batched products, no libdnnl, empty inputs) takes the torch ops. float32 results differ from
// OpenBLAS's only in summation order (float rounding).
#pragma once
#include <torch/torch.h>

#include <string>

namespace bt::model {

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

// a [B, H, M, K] times (transpose_b ? b [B, H, N, K]^T : b [B, H, K, N]), divided by divide_by (oneDNN: times
// its reciprocal inside the GEMM). Other ranks: torch::matmul.
torch::Tensor batched_matmul(const torch::Tensor& a, const torch::Tensor& b, bool transpose_b, double divide_by = 1.0);

// What runs CPU float32 products in this process: "onednn" or "torch" (no libdnnl, or
// BRIDGETUNE_CPU_GEMM=torch, read once: the A/B switch of bench/model and the parity tests).
std::string cpu_gemm_name();
// Tests: force the choice (true: oneDNN where available).
void set_cpu_gemm_onednn(bool on);

}  // namespace bt::model
