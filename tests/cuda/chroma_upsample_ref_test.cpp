// The CPU reference of the GPU colour stage against libjpeg-turbo itself: from the planes
// tjDecompressToYUVPlanes gives (libjpeg's IDCT output before upsampling), reference_ycc_to_rgb must return
// exactly what tjDecompress2 (default flags: fancy upsampling) returns, for every layout nvJPEG decodes to
// planes and for tiny, odd and even sizes (the edge columns/rows and libjpeg's narrow-plane special case).
#include "cuda/chroma_upsample_ref.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <array>
#include <random>
#include <vector>

#include "batch_fixture.h"
#include "common/error.h"

namespace bt::cuda {
namespace {

std::vector<uint8_t> encode(const test::Image& im, int subsamp, int quality) {
  tjhandle h = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long len = 0;
  EXPECT_EQ(tjCompress2(h, im.px.data(), im.w, 0, im.h, TJPF_RGB, &buf, &len, subsamp, quality, 0), 0)
      << tjGetErrorStr2(h);
  std::vector<uint8_t> out(buf, buf + len);
  tjFree(buf);
  tjDestroy(h);
  return out;
}

// Saturated noise: chroma far from neutral drives the range limit at both ends.
test::Image noise_image(int w, int h, uint32_t seed) {
  std::mt19937 rng(seed);
  test::Image im{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  for (uint8_t& v : im.px) v = static_cast<uint8_t>(rng() % 4 == 0 ? (rng() % 2) * 255 : rng() % 256);
  return im;
}

struct Decoded {
  std::vector<uint8_t> rgb, reference;
};

// Both decodes of one JPEG: tjDecompress2's RGB and the reference's RGB from tjDecompressToYUVPlanes' planes.
Decoded decode_both(const std::vector<uint8_t>& jpg, int subsamp, int hf, int vf) {
  tjhandle d = tjInitDecompress();
  int w = 0, h = 0, ss = -1, cs = -1;
  EXPECT_EQ(tjDecompressHeader3(d, jpg.data(), jpg.size(), &w, &h, &ss, &cs), 0);
  EXPECT_EQ(ss, subsamp);
  Decoded out;
  out.rgb.resize(static_cast<size_t>(w) * h * 3);
  EXPECT_EQ(tjDecompress2(d, jpg.data(), jpg.size(), out.rgb.data(), w, 0, h, TJPF_RGB, 0), 0) << tjGetErrorStr2(d);
  // TurboJPEG pads the planes to whole MCUs' worth of samples (Y to a multiple of the factor); the strides are
  // given explicitly so each plane is exactly tjPlaneWidth bytes wide.
  std::array<std::vector<uint8_t>, 3> planes;
  std::array<unsigned char*, 3> ptrs{};
  std::array<int, 3> strides{};
  for (int c = 0; c < 3; ++c) {
    strides[c] = tjPlaneWidth(c, w, subsamp);
    planes[c].resize(static_cast<size_t>(strides[c]) * tjPlaneHeight(c, h, subsamp));
    ptrs[c] = planes[c].data();
  }
  EXPECT_EQ(tjDecompressToYUVPlanes(d, jpg.data(), jpg.size(), ptrs.data(), w, strides.data(), h, 0), 0)
      << tjGetErrorStr2(d);
  tjDestroy(d);
  YccPlanes p;
  p.y = planes[0].data(), p.cb = planes[1].data(), p.cr = planes[2].data();
  p.y_pitch = strides[0], p.c_pitch = strides[1];
  p.width = w, p.height = h, p.h_factor = hf, p.v_factor = vf;
  p.chroma_w = (w + hf - 1) / hf, p.chroma_h = (h + vf - 1) / vf;
  EXPECT_EQ(p.chroma_w, tjPlaneWidth(1, w, subsamp));
  EXPECT_EQ(p.chroma_h, tjPlaneHeight(1, h, subsamp));
  out.reference.resize(out.rgb.size());
  reference_ycc_to_rgb(p, out.reference.data());
  return out;
}

struct Layout {
  int subsamp, hf, vf;
  const char* name;
};
constexpr Layout kLayouts[] = {
    {TJSAMP_420, 2, 2, "4:2:0"}, {TJSAMP_422, 2, 1, "4:2:2"}, {TJSAMP_440, 1, 2, "4:4:0"}, {TJSAMP_444, 1, 1, "4:4:4"}};

void expect_exact(const test::Image& im, const Layout& l, int quality) {
  const Decoded d = decode_both(encode(im, l.subsamp, quality), l.subsamp, l.hf, l.vf);
  ASSERT_EQ(d.rgb.size(), d.reference.size());
  size_t first = d.rgb.size();
  for (size_t k = 0; k < d.rgb.size() && first == d.rgb.size(); ++k)
    if (d.rgb[k] != d.reference[k]) first = k;
  ASSERT_EQ(first, d.rgb.size()) << l.name << " " << im.w << "x" << im.h << " q" << quality
                                 << ": first difference at pixel (" << (first / 3) % im.w << ", " << (first / 3) / im.w
                                 << ") channel " << first % 3 << ": libjpeg-turbo " << int(d.rgb[first])
                                 << ", reference " << int(d.reference[first]);
}

TEST(ChromaUpsampleRef, EqualsLibjpegTurboOnNamedSizes) {
  const std::array<std::array<int, 2>, 10> sizes = {
      {{1, 1}, {2, 3}, {3, 2}, {4, 4}, {5, 7}, {17, 9}, {16, 16}, {33, 32}, {123, 77}, {200, 131}}};
  for (const Layout& l : kLayouts)
    for (const auto& [w, h] : sizes) {
      expect_exact(test::random_image(w, h, static_cast<uint32_t>(w * 31 + h)), l, 90);
      expect_exact(noise_image(w, h, static_cast<uint32_t>(w * 17 + h)), l, 75);
    }
}

// Every width 1..24 against heights around the 8/16-row iMCU boundaries, where libjpeg's context rows change.
TEST(ChromaUpsampleRef, EqualsLibjpegTurboOnASweepOfSmallSizes) {
  for (const Layout& l : kLayouts)
    for (int w = 1; w <= 24; ++w)
      for (int h : {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33})
        expect_exact(noise_image(w, h, static_cast<uint32_t>(w * 1000 + h)), l, 50 + (w * h) % 50);
}

TEST(ChromaUpsampleRef, RejectsLayoutsItDoesNotModel) {
  YccPlanes p;
  p.width = 8, p.height = 8, p.y_pitch = 8;
  p.h_factor = 4, p.v_factor = 1, p.chroma_w = 2, p.chroma_h = 8, p.c_pitch = 2;  // 4:1:1
  EXPECT_FALSE(ycc_layout_supported(p));
  std::vector<uint8_t> out(8 * 8 * 3);
  EXPECT_THROW(reference_ycc_to_rgb(p, out.data()), Error);
  p.h_factor = 2, p.chroma_w = 3;  // plane size inconsistent with 4:2:2
  EXPECT_FALSE(ycc_layout_supported(p));
  p.chroma_w = 4, p.c_pitch = 4;
  EXPECT_TRUE(ycc_layout_supported(p));
}

}  // namespace
}  // namespace bt::cuda
