// QuickGELU kernels, y = x * sigmoid(1.702 x) and dx = dy * f'(x), for contiguous float / bf16 / half arrays:
// one pass each way, math in float, one rounding to the element type, on the caller's stream. Needs only the
// CUDA runtime; kernels/quick_gelu/quick_gelu.h's autograd function calls them through kernels/cuda_ops.cpp.
#pragma once
#include <cstdint>
#include <string>

struct CUstream_st;  // cudaStream_t without including the CUDA headers

namespace bt::kernels::cuda {

enum class Elt { kF32, kBF16, kF16 };

// Returns "" on success, else the CUDA error's text (launch errors only; the kernels themselves cannot fail).
std::string quick_gelu_forward(const void* x, void* y, int64_t n, Elt t, CUstream_st* stream);
std::string quick_gelu_backward(const void* dy, const void* x, void* dx, int64_t n, Elt t, CUstream_st* stream);

}  // namespace bt::kernels::cuda
