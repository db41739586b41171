// CPU-vs-GPU parity of the batch kernel: bit-exact equality with cuda::reference_run. Skipped (and reported
// as skipped by ctest) without a CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>

#include "batch_fixture.h"
#include "common/error.h"
#include "cuda/batch_resize.h"
#include "cuda/resize_ref.h"

namespace bt::cuda {
namespace {

#define REQUIRE_GPU()                                                    \
  do {                                                                   \
    std::string why;                                                     \
    if (!cuda_device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why; \
  } while (0)

std::vector<uint8_t> run_gpu(BatchResize& k, const test::Batch& b, int n, OutputType type, cudaStream_t st,
                             bool device_input) {
  const BatchPlan& plan = k.Setup(b.specs, b.offsets, b.packed.size(), n, type);
  DeviceBuffer out(plan.output_bytes());
  cudaMemsetAsync(out.get(), 0xFF, plan.output_bytes(), st);
  PinnedBuffer pinned;
  std::memcpy(pinned.reserve(b.packed.size()), b.packed.data(), b.packed.size());
  DeviceBuffer din(device_input ? b.packed.size() : 0);
  if (device_input) {
    cudaMemcpy(din.get(), b.packed.data(), b.packed.size(), cudaMemcpyHostToDevice);
    k.RunDevice(st, static_cast<const uint8_t*>(din.get()), out.get());
  } else {
    k.Run(st, pinned.data(), out.get());
  }
  k.Synchronize();
  EXPECT_TRUE(k.input_released());
  std::vector<uint8_t> host(plan.output_bytes());
  EXPECT_EQ(cudaMemcpy(host.data(), out.get(), host.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

std::vector<uint8_t> run_cpu(const test::Batch& b, int n, OutputType type) {
  const BatchPlan plan = make_plan(b.specs, b.offsets, b.packed.size(), n, type);
  std::vector<uint8_t> out(plan.output_bytes());
  reference_run(plan, b.packed.data(), out.data());
  return out;
}

void expect_same(const std::vector<uint8_t>& gpu, const std::vector<uint8_t>& cpu, size_t elem) {
  ASSERT_EQ(gpu.size(), cpu.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < gpu.size(); i += elem)
    if (std::memcmp(&gpu[i], &cpu[i], elem) != 0 && bad++ == 0) first = i / elem;
  EXPECT_EQ(bad, 0u) << "first differing element " << first;
}

TEST(CudaParity, SmallMixedBatchFloat32) {
  REQUIRE_GPU();
  BatchResize k;
  const test::Batch b = test::mixed_batch(16, 30, 11, false);
  expect_same(run_gpu(k, b, 16, OutputType::kFloat32, nullptr, false), run_cpu(b, 16, OutputType::kFloat32), 4);
}

TEST(CudaParity, BenchmarkSizedBatchBf16OnAStream) {
  REQUIRE_GPU();
  cudaStream_t st;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  BatchResize k;
  const test::Batch b = test::mixed_batch(288, 6, 12, true);
  expect_same(run_gpu(k, b, 288, OutputType::kBFloat16, st, false), run_cpu(b, 288, OutputType::kBFloat16), 2);
  // The same object, reused with another batch, a different size and device-resident input.
  const test::Batch c = test::mixed_batch(37, 9, 13, false);
  expect_same(run_gpu(k, c, 37, OutputType::kFloat32, st, true), run_cpu(c, 37, OutputType::kFloat32), 4);
  cudaStreamDestroy(st);
}

// Colour jitter (train --color_jitter): the u8 detour kernels == the reference, fp32 and bf16, host and device
// input; the same object then runs a batch without jitter (the fused path) and one with again.
TEST(CudaParity, ColourJitterBatchEqualsReference) {
  REQUIRE_GPU();
  cudaStream_t st;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  BatchResize k;
  test::Batch b = test::mixed_batch(288, 8, 14, true);
  test::add_jitter(b, 3);
  expect_same(run_gpu(k, b, 288, OutputType::kBFloat16, st, false), run_cpu(b, 288, OutputType::kBFloat16), 2);
  const test::Batch plain = test::mixed_batch(40, 9, 15, false);
  expect_same(run_gpu(k, plain, 40, OutputType::kFloat32, st, true), run_cpu(plain, 40, OutputType::kFloat32), 4);
  test::Batch c = test::mixed_batch(37, 17, 16, false);
  test::add_jitter(c, 4);
  expect_same(run_gpu(k, c, 37, OutputType::kFloat32, st, true), run_cpu(c, 37, OutputType::kFloat32), 4);
  cudaStreamDestroy(st);
}

// Runs everywhere: the device query must answer (never crash) and explain a "no".
TEST(CudaDevice, QueryAnswersAndExplains) {
  std::string why;
  const bool ok = cuda_device_available(&why);
  EXPECT_TRUE(ok || !why.empty());
  EXPECT_EQ(cuda_device_available(), ok);
}

TEST(CudaParity, RunBeforeSetupThrows) {
  REQUIRE_GPU();
  BatchResize k;
  EXPECT_THROW(k.Run(nullptr, nullptr, nullptr), Error);
}

}  // namespace
}  // namespace bt::cuda
