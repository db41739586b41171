// The GPU colour stage alone (no nvJPEG): random Y/Cb/Cr planes of every supported layout and assorted sizes,
// with pitches wider than the planes, in one call of more jobs than one launch carries; each image must
// equal the CPU reference (itself checked against libjpeg-turbo in chroma_upsample_ref_test.cpp).
#include "cuda/ycc_convert.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <vector>

#include "cuda/batch_resize.h"
#include "cuda/chroma_upsample_ref.h"

namespace bt::cuda {
namespace {

struct HostJob {
  YccPlanes planes;  // pointers into `bytes`
  std::vector<uint8_t> bytes;
  size_t cb_at = 0, cr_at = 0;
};

HostJob random_planes(int w, int h, int hf, int vf, std::mt19937& rng) {
  HostJob j;
  YccPlanes& p = j.planes;
  p.width = w, p.height = h, p.h_factor = hf, p.v_factor = vf;
  p.chroma_w = (w + hf - 1) / hf, p.chroma_h = (h + vf - 1) / vf;
  p.y_pitch = w + 5, p.c_pitch = p.chroma_w + 3;
  j.cb_at = static_cast<size_t>(p.y_pitch) * h;
  j.cr_at = j.cb_at + static_cast<size_t>(p.c_pitch) * p.chroma_h;
  j.bytes.resize(j.cr_at + static_cast<size_t>(p.c_pitch) * p.chroma_h);
  for (uint8_t& b : j.bytes) b = static_cast<uint8_t>(rng() % 8 == 0 ? (rng() % 2) * 255 : rng() % 256);
  p.y = j.bytes.data(), p.cb = p.y + j.cb_at, p.cr = p.y + j.cr_at;
  return j;
}

TEST(CudaYcc, KernelEqualsTheCpuReference) {
  std::string why;
  if (!cuda_device_available(&why)) GTEST_SKIP() << why;
  std::mt19937 rng(7);
  std::vector<HostJob> host;
  constexpr std::array<std::array<int, 2>, 4> kFactors = {{{2, 2}, {2, 1}, {1, 2}, {1, 1}}};
  constexpr std::array<std::array<int, 2>, 14> kSizes = {{{1, 1},
                                                          {2, 3},
                                                          {3, 2},
                                                          {4, 4},
                                                          {5, 7},
                                                          {17, 9},
                                                          {16, 16},
                                                          {33, 32},
                                                          {123, 77},
                                                          {1, 40},
                                                          {40, 1},
                                                          {640, 480},
                                                          {741, 699},
                                                          {2, 2}}};
  for (const auto& [hf, vf] : kFactors)
    for (const auto& [w, h] : kSizes) host.push_back(random_planes(w, h, hf, vf, rng));
  // Device copies: planes and outputs, each job at its own offset.
  size_t in_bytes = 0, out_bytes = 0;
  for (const HostJob& j : host)
    in_bytes += j.bytes.size(), out_bytes += static_cast<size_t>(j.planes.width) * j.planes.height * 3;
  DeviceBuffer d_in(in_bytes), d_out(out_bytes);
  std::vector<YccJob> jobs;
  size_t in_at = 0, out_at = 0;
  for (const HostJob& j : host) {
    auto* base = static_cast<uint8_t*>(d_in.get()) + in_at;
    ASSERT_EQ(cudaMemcpy(base, j.bytes.data(), j.bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
    YccPlanes p = j.planes;
    p.y = base, p.cb = base + j.cb_at, p.cr = base + j.cr_at;
    jobs.push_back(YccJob{p, static_cast<uint8_t*>(d_out.get()) + out_at});
    in_at += j.bytes.size();
    out_at += static_cast<size_t>(p.width) * p.height * 3;
  }
  ycc_to_rgb_device(nullptr, jobs);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> got(out_bytes);
  ASSERT_EQ(cudaMemcpy(got.data(), d_out.get(), out_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  out_at = 0;
  for (const HostJob& j : host) {
    const YccPlanes& p = j.planes;
    std::vector<uint8_t> want(static_cast<size_t>(p.width) * p.height * 3);
    reference_ycc_to_rgb(p, want.data());
    const std::vector<uint8_t> mine(got.begin() + out_at, got.begin() + out_at + want.size());
    EXPECT_EQ(mine, want) << p.width << "x" << p.height << " factors " << p.h_factor << "x" << p.v_factor;
    out_at += want.size();
  }
}

}  // namespace
}  // namespace bt::cuda
