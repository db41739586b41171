// nvJPEG decode: loaded at run time; without a device (or the library) create() returns nullptr with a
// reason and the test is skipped. With one, it must decode close to libjpeg-turbo.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cmath>

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

std::vector<uint8_t> turbo_decode(const std::vector<uint8_t>& jpg, int w, int h) {
  tjhandle d = tjInitDecompress();
  std::vector<uint8_t> out(static_cast<size_t>(w) * h * 3);
  EXPECT_EQ(tjDecompress2(d, jpg.data(), jpg.size(), out.data(), w, 0, h, TJPF_RGB, 0), 0);
  tjDestroy(d);
  return out;
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

TEST(CudaNvjpeg, DecodesCloseToLibjpegTurbo) {
  std::string why;
  auto dec = NvjpegDecoder::create(&why);
  if (!dec) GTEST_SKIP() << "nvJPEG unavailable: " << why;
  std::vector<test::Image> ims = {test::random_image(123, 77, 1), test::random_image(64, 64, 2)};
  std::vector<std::vector<uint8_t>> jpgs = {encode_jpeg(ims[0], TJSAMP_420), encode_jpeg(ims[1], TJSAMP_444)};
  std::vector<std::span<const uint8_t>> spans;
  std::vector<uint64_t> offsets;
  size_t total = 0;
  for (size_t i = 0; i < ims.size(); ++i) {
    const JpegInfo info = dec->info(jpgs[i]);
    EXPECT_EQ(info.width, ims[i].w);
    EXPECT_EQ(info.height, ims[i].h);
    spans.emplace_back(jpgs[i]);
    offsets.push_back(total);
    total += ims[i].px.size();
  }
  DeviceBuffer out(total);
  dec->decode_batch(nullptr, spans, static_cast<uint8_t*>(out.get()), offsets);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> host(total);
  ASSERT_EQ(cudaMemcpy(host.data(), out.get(), total, cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t i = 0; i < ims.size(); ++i) {
    const std::vector<uint8_t> ref = turbo_decode(jpgs[i], ims[i].w, ims[i].h);
    double sum = 0;
    for (size_t k = 0; k < ref.size(); ++k) sum += std::abs(int(ref[k]) - int(host[offsets[i] + k]));
    EXPECT_LT(sum / ref.size(), 2.0) << "image " << i << " backend " << dec->backend();
  }
  const std::vector<uint8_t> junk = {0xFF, 0xD8, 0x00, 0x01};
  EXPECT_THROW(dec->info(junk), Error);
}

}  // namespace
}  // namespace bt::cuda
