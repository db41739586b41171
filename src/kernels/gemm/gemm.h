// The one place that decides which GEMM runs the model's float32 products on the CPU: Linear layers
// (y = x W^T + b) and attention's two batched products (scores = q k^T / sqrt(d), context = p v).
// CPU float32 outside autocast: oneDNN's sgemm (libdnnl, which Debian's libtorch links) as autograd functions
// with their own backward GEMMs. Linear runs each GEMM on all of torch's OpenMP threads; the batched products
// run one single-threaded GEMM per (batch, head) matrix across those threads, reading q, k, v in place through
// their strides (no contiguous copies) and folding the 1/sqrt(d) into the GEMM. libtorch's own float32 path there is
// OpenBLAS, which bridgetune pins to one thread (model/runtime.cpp: its pool would oversubscribe torch's), and
// bmm's per-matrix loop. Linear under CPU autocast to bf16: oneDNN's bf16 GEMM with autocast's bf16 operands and
// result, the float32 inputs' gradients kept in float32 (gemm.cpp says why). On a CPU where oneDNN has no bf16
// GEMM (below AVX512_CORE, or capped there by ONEDNN_MAX_CPU_ISA) the same bf16 roundings around float32 sgemm,
// for Linear and for autocast's batched products alike (cpu_bf16_gemm_name). Everything else (CUDA, half, native
// bf16 autocast's batched products, no libdnnl, empty inputs) takes the torch ops. float32 results differ from
// OpenBLAS's only in summation order (float rounding).
#pragma once
#include <torch/torch.h>

#include <string>

namespace bt::kernels {

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

// The patch embedding: conv2d(x [B, C, H, W], w [h, C, p, p], stride p), non-overlapping patches. Where bf16 is
// emulated under autocast, the patches times w^T through linear() (libtorch's bf16 convolution there is im2col and a
// scalar GEMM: 17 % of an emulated small-preset step); elsewhere torch::conv2d.
torch::Tensor patch_embedding(const torch::Tensor& x, const torch::Tensor& w, int64_t patch);

// a [B, H, M, K] times (transpose_b ? b [B, H, N, K]^T : b [B, H, K, N]), divided by divide_by (oneDNN: times
// its reciprocal inside the GEMM). Other ranks: torch::matmul.
torch::Tensor batched_matmul(const torch::Tensor& a, const torch::Tensor& b, bool transpose_b, double divide_by = 1.0);

// What runs CPU float32 products in this process: "onednn" or "torch" (no libdnnl, or the switch
// BRIDGETUNE_CPU_GEMM=torch, common/runtime.h: the A/B switch of bench/model and the parity tests).
std::string cpu_gemm_name();
// What runs CPU bf16 products (Linear and attention's under CPU autocast to bf16): "onednn_bf16" (oneDNN's bf16 GEMM,
// AVX512_CORE and up), "float32_emulated" (sgemm on the bf16 operands widened: any x86-64 CPU, or under
// ONEDNN_MAX_CPU_ISA below AVX512_CORE), or "torch" (no libdnnl, BRIDGETUNE_CPU_GEMM=torch).
std::string cpu_bf16_gemm_name();
// Tests: true runs bf16 products as the emulation whatever the CPU; false returns to what this CPU was found to run.
void set_cpu_bf16_gemm_emulated(bool emulated);

}  // namespace bt::kernels
