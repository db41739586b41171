// nvJPEG decode: loaded at run time; without a device (or the library) create() returns nullptr with a
// reason and the test is skipped. With one, it must decode exactly as libjpeg-turbo's default decode does.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "batch_fixture.h"
#include "common/error.h"
#include "cuda/batch_resize.h"
#include "cuda/nvjpeg_decoder.h"

namespace bt::cuda {
namespace {

std::vector<uint8_t> encode_jpeg(const test::Image& im, int subsamp) {
  tjhandle h = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long len = 0;
  EXPECT_EQ(tjCompress2(h, im.px.data(), im.w, 0, im.h, TJPF_RGB, &buf, &len, subsamp, 90, 0), 0);
  std::vector<uint8_t> out(buf, buf + len);
  tjFree(buf);
  tjDestroy(h);
  return out;
}

std::vector<uint8_t> turbo_decode(const std::vector<uint8_t>& jpg, int w, int h, int flags = 0) {
  tjhandle d = tjInitDecompress();
  std::vector<uint8_t> out(static_cast<size_t>(w) * h * 3);
  EXPECT_EQ(tjDecompress2(d, jpg.data(), jpg.size(), out.data(), w, 0, h, TJPF_RGB, flags), 0);
  tjDestroy(d);
  return out;
}

std::vector<uint8_t> nvjpeg_decode_one(NvjpegDecoder& dec, const std::vector<uint8_t>& jpg, size_t bytes) {
  DeviceBuffer out(bytes);
  dec.decode_batch(nullptr, {std::span<const uint8_t>(jpg)}, static_cast<uint8_t*>(out.get()), {0});
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> host(bytes);
  EXPECT_EQ(cudaMemcpy(host.data(), out.get(), bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

double mean_abs_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  double sum = 0;
  for (size_t k = 0; k < a.size(); ++k) sum += std::abs(int(a[k]) - int(b[k]));
  return sum / static_cast<double>(a.size());
}

TEST(CudaNvjpeg, CreateReportsWhyWhenUnavailable) {
  std::string why;
  auto dec = NvjpegDecoder::create(&why);
  if (!dec) {
    EXPECT_FALSE(why.empty());
    GTEST_SKIP() << "nvJPEG unavailable: " << why;
  }
  EXPECT_FALSE(nvjpeg_library_loaded().empty());
}

struct Case {
  test::Image im;
  int subsamp;
  std::vector<uint8_t> jpg;
};

std::vector<Case> make_cases(const std::vector<std::array<int, 3>>& whs) {
  std::vector<Case> cases;
  for (const auto& [w, h, subsamp] : whs) {
    Case c{test::random_image(w, h, static_cast<uint32_t>(w * 7 + h + subsamp)), subsamp, {}};
    c.jpg = encode_jpeg(c.im, subsamp);
    cases.push_back(std::move(c));
  }
  return cases;
}

// One decode_batch() of all the cases, on `stream`; each image must equal tjDecompress2's, byte for byte.
void expect_batch_exact(NvjpegDecoder& dec, const std::vector<Case>& cases, cudaStream_t stream) {
  std::vector<std::span<const uint8_t>> spans;
  std::vector<uint64_t> offsets;
  size_t total = 0;
  for (const Case& c : cases) {
    const JpegInfo info = dec.info(c.jpg);
    EXPECT_EQ(info.width, c.im.w);
    EXPECT_EQ(info.height, c.im.h);
    spans.emplace_back(c.jpg);
    offsets.push_back(total);
    total += (c.im.px.size() + 7) & ~size_t{7};
  }
  DeviceBuffer out(total);
  ASSERT_EQ(cudaMemset(out.get(), 0xAB, total), cudaSuccess);
  dec.decode_batch(stream, spans, static_cast<uint8_t*>(out.get()), offsets);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<uint8_t> host(total);
  ASSERT_EQ(cudaMemcpy(host.data(), out.get(), total, cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::vector<uint8_t> ref = turbo_decode(c.jpg, c.im.w, c.im.h);
    const std::vector<uint8_t> got(host.begin() + offsets[i], host.begin() + offsets[i] + ref.size());
    int max_diff = 0;
    for (size_t k = 0; k < ref.size(); ++k) max_diff = std::max(max_diff, std::abs(int(ref[k]) - int(got[k])));
    EXPECT_EQ(max_diff, 0) << "image " << i << " (" << c.im.w << "x" << c.im.h << ", TJSAMP " << c.subsamp
                           << ", backend " << dec.backend() << "): mean |diff| " << mean_abs_diff(got, ref);
  }
}

// Mixed layouts and odd sizes in one batch (planar-YUV and RGBI groups together), then tiny images on another
// stream (the plane scratch grows or is reused across streams).
TEST(CudaNvjpeg, DecodesExactlyLikeLibjpegTurbo) {
  std::string why;
  auto dec = NvjpegDecoder::create(&why);
  if (!dec) GTEST_SKIP() << "nvJPEG unavailable: " << why;
  const std::string created = dec->backend();
  expect_batch_exact(*dec,
                     make_cases({{123, 77, TJSAMP_420}, {65, 33, TJSAMP_422}, {45, 31, TJSAMP_440},
                                 {63, 47, TJSAMP_444}, {23, 19, TJSAMP_GRAY}, {741, 699, TJSAMP_420},
                                 {64, 64, TJSAMP_444}, {300, 201, TJSAMP_422}}),
                     nullptr);
  std::printf("nvjpeg mixed batch: decoder created as %s, %s after the batch\n", created.c_str(), dec->backend());
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  expect_batch_exact(*dec,
                     make_cases({{1, 1, TJSAMP_420}, {2, 3, TJSAMP_422}, {3, 2, TJSAMP_440}, {1, 1, TJSAMP_444},
                                 {5, 7, TJSAMP_420}, {17, 9, TJSAMP_440}, {4, 4, TJSAMP_422}, {3, 3, TJSAMP_GRAY}}),
                     stream);
  std::printf("nvjpeg tiny batch: %s after the batch\n", dec->backend());
  expect_batch_exact(*dec, make_cases({{1023, 767, TJSAMP_420}, {17, 9, TJSAMP_422}}), stream);  // grows
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  const std::vector<uint8_t> junk = {0xFF, 0xD8, 0x00, 0x01};
  EXPECT_THROW(dec->info(junk), Error);
}

// Both backends on 4:2:0 against libjpeg-turbo's default ("fancy", triangular: what PIL gives) and its
// TJFLAG_FASTUPSAMPLE (replication: what nvJPEG's own RGB output does). Prints the four distances (the GPU
// check records the lines) and requires each backend to equal fancy upsampling.
TEST(CudaNvjpeg, ChromaUpsamplingOfEachBackendOn420) {
  std::string why;
  auto hw = NvjpegDecoder::create(&why);
  if (!hw) GTEST_SKIP() << "nvJPEG unavailable: " << why;
  auto hybrid = NvjpegDecoder::create(&why, /*hybrid_only=*/true);
  ASSERT_TRUE(hybrid) << why;
  const test::Image im = test::random_image(123, 77, 1);
  const std::vector<uint8_t> jpg = encode_jpeg(im, TJSAMP_420);
  const std::vector<uint8_t> fancy = turbo_decode(jpg, im.w, im.h);
  const std::vector<uint8_t> fast = turbo_decode(jpg, im.w, im.h, TJFLAG_FASTUPSAMPLE);
  for (NvjpegDecoder* dec : {hw.get(), hybrid.get()}) {
    const std::string created = dec->backend();
    const std::vector<uint8_t> px = nvjpeg_decode_one(*dec, jpg, im.px.size());
    const double to_fancy = mean_abs_diff(px, fancy), to_fast = mean_abs_diff(px, fast);
    std::printf("nvjpeg 4:2:0 backend %s (decoded by %s): mean |diff| to libjpeg-turbo fancy upsampling %.3f, fast "
                "upsampling %.3f\n",
                created.c_str(), dec->backend(), to_fancy, to_fast);
    RecordProperty(created + "_to_fancy", std::to_string(to_fancy));
    RecordProperty(created + "_to_fast", std::to_string(to_fast));
    EXPECT_EQ(px, fancy) << created;
  }
}

}  // namespace
}  // namespace bt::cuda
