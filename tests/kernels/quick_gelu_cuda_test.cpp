// The QuickGELU CUDA kernels (src/kernels/quick_gelu/quick_gelu.cu) against the formula in double, float and bf16,
// forward and backward. Skipped (and reported as skipped by ctest) without a CUDA device.
#include "kernels/quick_gelu/quick_gelu_cuda.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cuda/batch_resize.h"

namespace bt::kernels::cuda {
namespace {

double f(double x) { return x / (1 + std::exp(-1.702 * x)); }
double df(double x) {
  const double s = 1 / (1 + std::exp(-1.702 * x));
  return s + 1.702 * x * s * (1 - s);
}

std::vector<float> inputs() {
  std::vector<float> x;
  for (int i = -4000; i <= 4000; ++i) x.push_back(i * 0.004f);  // [-16, 16] plus both far tails
  x.insert(x.end(), {-90.f, 90.f, 0.f});
  return x;
}

template <typename T>
std::vector<T> run(const std::vector<T>& x, const std::vector<T>* dy, Elt t) {
  const size_t bytes = x.size() * sizeof(T);
  void *dx_in = nullptr, *d_dy = nullptr, *d_out = nullptr;
  EXPECT_EQ(cudaMalloc(&dx_in, bytes), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&d_out, bytes), cudaSuccess);
  cudaMemcpy(dx_in, x.data(), bytes, cudaMemcpyHostToDevice);
  std::string err;
  if (dy) {
    EXPECT_EQ(cudaMalloc(&d_dy, bytes), cudaSuccess);
    cudaMemcpy(d_dy, dy->data(), bytes, cudaMemcpyHostToDevice);
    err = quick_gelu_backward(d_dy, dx_in, d_out, static_cast<int64_t>(x.size()), t, nullptr);
  } else {
    err = quick_gelu_forward(dx_in, d_out, static_cast<int64_t>(x.size()), t, nullptr);
  }
  EXPECT_EQ(err, "");
  std::vector<T> out(x.size());
  EXPECT_EQ(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(dx_in), cudaFree(d_out), cudaFree(d_dy);
  return out;
}

TEST(CudaQuickGelu, FloatForwardAndBackwardMatchTheFormula) {
  std::string why;
  if (!bt::cuda::cuda_device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  const auto x = inputs();
  std::vector<float> dy(x.size());
  for (size_t i = 0; i < x.size(); ++i) dy[i] = 0.5f + 0.001f * static_cast<float>(i % 97);
  const auto y = run<float>(x, nullptr, Elt::kF32);
  const auto dx = run<float>(x, &dy, Elt::kF32);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_NEAR(y[i], f(x[i]), 2e-6 * (1 + std::fabs(f(x[i])))) << x[i];
    ASSERT_NEAR(dx[i], dy[i] * df(x[i]), 2e-6 * (1 + std::fabs(dy[i] * df(x[i])))) << x[i];
  }
}

TEST(CudaQuickGelu, Bf16RoundsOnce) {
  std::string why;
  if (!bt::cuda::cuda_device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  const auto xf = inputs();
  std::vector<__nv_bfloat16> x;
  for (float v : xf) x.push_back(__float2bfloat16(v));
  const auto y = run<__nv_bfloat16>(x, nullptr, Elt::kBF16);
  for (size_t i = 0; i < x.size(); ++i) {
    const double xi = __bfloat162float(x[i]), want = f(xi);
    // within one bf16 rounding (relative 2^-8) of the exact value
    ASSERT_NEAR(__bfloat162float(y[i]), want, std::fabs(want) / 256 + 1e-6) << xi;
  }
}

}  // namespace
}  // namespace bt::kernels::cuda
