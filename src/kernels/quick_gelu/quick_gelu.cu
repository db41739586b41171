#include "kernels/quick_gelu/quick_gelu_cuda.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace bt::kernels::cuda {

namespace {

constexpr float kAlpha = 1.702f;

__device__ __forceinline__ float load(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ float load(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ void store(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, int64_t i, float v) { p[i] = __float2bfloat16(v); }
__device__ __forceinline__ void store(__half* p, int64_t i, float v) { p[i] = __float2half(v); }

template <typename T>
__global__ void fwd_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = load(x, i);
    store(y, i, v / (1.f + expf(-kAlpha * v)));
  }
}

template <typename T>
__global__ void bwd_kernel(const T* __restrict__ dy, const T* __restrict__ x, T* __restrict__ dx, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = load(x, i);
    const float s = 1.f / (1.f + expf(-kAlpha * v));
    store(dx, i, load(dy, i) * s * (1.f + kAlpha * v * (1.f - s)));
  }
}

// Grid-stride loops: enough blocks to fill the GPU, never more than the data needs.
dim3 grid_for(int64_t n) {
  constexpr int64_t kThreads = 256, kMaxBlocks = 65535;
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return dim3(static_cast<unsigned>(blocks < kMaxBlocks ? (blocks > 0 ? blocks : 1) : kMaxBlocks));
}

std::string status() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? std::string() : std::string(cudaGetErrorString(e));
}

}  // namespace

std::string quick_gelu_forward(const void* x, void* y, int64_t n, Elt t, CUstream_st* stream) {
  if (n <= 0) return {};
  switch (t) {
    case Elt::kF32:
      fwd_kernel<<<grid_for(n), 256, 0, stream>>>(static_cast<const float*>(x), static_cast<float*>(y), n);
      break;
    case Elt::kBF16:
      fwd_kernel<<<grid_for(n), 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(x),
                                                  static_cast<__nv_bfloat16*>(y), n);
      break;
    case Elt::kF16:
      fwd_kernel<<<grid_for(n), 256, 0, stream>>>(static_cast<const __half*>(x), static_cast<__half*>(y), n);
      break;
  }
  return status();
}

std::string quick_gelu_backward(const void* dy, const void* x, void* dx, int64_t n, Elt t, CUstream_st* stream) {
  if (n <= 0) return {};
  switch (t) {
    case Elt::kF32:
      bwd_kernel<<<grid_for(n), 256, 0, stream>>>(static_cast<const float*>(dy), static_cast<const float*>(x),
                                                  static_cast<float*>(dx), n);
      break;
    case Elt::kBF16:
      bwd_kernel<<<grid_for(n), 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(dy),
                                                  static_cast<const __nv_bfloat16*>(x),
                                                  static_cast<__nv_bfloat16*>(dx), n);
      break;
    case Elt::kF16:
      bwd_kernel<<<grid_for(n), 256, 0, stream>>>(static_cast<const __half*>(dy), static_cast<const __half*>(x),
                                                  static_cast<__half*>(dx), n);
      break;
  }
  return status();
}

}  // namespace bt::kernels::cuda
