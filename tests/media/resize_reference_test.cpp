// The SIMD resize against a plain scalar transcription of Pillow's ImagingResampleInner (8-bit path) on
// random sizes, boxes and windows, including big reductions (hundreds of taps) and 1-pixel images.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "media/resize.h"
#include "media/transform.h"

namespace bt::media {
namespace {

std::vector<uint8_t> reference_resize(const std::vector<uint8_t>& src, int w, int h, Box box, int ow, int oh) {
  const bool need_h = ow != w || box.x0 != 0 || box.x1 != ow;
  const bool need_v = oh != h || box.y0 != 0 || box.y1 != oh;
  const ResampleCoeffs hc = compute_resample_coeffs(w, box.x0, box.x1, ow);
  const ResampleCoeffs vc = compute_resample_coeffs(h, box.y0, box.y1, oh);
  const int y_first = vc.bounds[0].first;
  const int y_last = vc.bounds[oh - 1].first + vc.bounds[oh - 1].count;
  std::vector<uint8_t> tmp;
  int tw = w, th = h, row0 = 0;
  if (need_h) {
    tw = ow;
    th = need_v ? y_last - y_first : h;
    row0 = need_v ? y_first : 0;
    tmp.resize(size_t(tw) * th * 3);
    for (int y = 0; y < th; ++y)
      for (int x = 0; x < ow; ++x)
        for (int c = 0; c < 3; ++c) {
          int32_t acc = kFixedHalf;
          for (int k = 0; k < hc.bounds[x].count; ++k)
            acc += src[(size_t(y + row0) * w + hc.bounds[x].first + k) * 3 + c] * hc.fixed[size_t(x) * hc.taps + k];
          tmp[(size_t(y) * ow + x) * 3 + c] = clip8_fixed(acc);
        }
  } else {
    tmp = src;
  }
  if (!need_v) return tmp;
  std::vector<uint8_t> out(size_t(ow) * oh * 3);
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x)
      for (int c = 0; c < 3; ++c) {
        int32_t acc = kFixedHalf;
        for (int k = 0; k < vc.bounds[y].count; ++k)
          acc += tmp[(size_t(vc.bounds[y].first - row0 + k) * tw + x) * 3 + c] * vc.fixed[size_t(y) * vc.taps + k];
        out[(size_t(y) * ow + x) * 3 + c] = clip8_fixed(acc);
      }
  return out;
}

void check(std::mt19937& rng, int w, int h, int ow, int oh, Box box, bool window) {
  if (box.x1 == 0) box = Box{0, 0, double(w), double(h)};
  std::vector<uint8_t> src(size_t(w) * h * 3);
  for (auto& v : src) v = uint8_t(rng() % 4 ? rng() : (rng() % 2) * 255);  // noise with hard extremes
  const auto want = reference_resize(src, w, h, box, ow, oh);
  Window win{0, 0, ow, oh};
  if (window) {
    win.w = 1 + int(rng() % ow), win.h = 1 + int(rng() % oh);
    win.x = int(rng() % (ow - win.w + 1)), win.y = int(rng() % (oh - win.h + 1));
  }
  ResizeScratch rs;
  // Exactly-sized output buffer: ASan catches any write outside the window.
  std::vector<uint8_t> got(size_t(win.w) * win.h * 3);
  resize_rgb8(src.data(), w, h, size_t(w) * 3, box, ow, oh, win, got.data(), size_t(win.w) * 3, rs);
  for (int y = 0; y < win.h; ++y)
    for (int x = 0; x < win.w * 3; ++x)
      ASSERT_EQ(got[size_t(y) * win.w * 3 + x], want[(size_t(win.y + y) * ow + win.x) * 3 + x])
          << w << "x" << h << " box " << box.x0 << "," << box.y0 << "," << box.x1 << "," << box.y1 << " -> " << ow
          << "x" << oh << " win " << win.x << "," << win.y << " " << win.w << "x" << win.h << " at " << x << "," << y;
}

TEST(MediaResizeReference, RandomSizesBoxesWindows) {
  std::mt19937 rng(11);
  for (int t = 0; t < 150; ++t) {
    const int w = 1 + int(rng() % 140), h = 1 + int(rng() % 140);
    const int ow = 1 + int(rng() % 100), oh = 1 + int(rng() % 100);
    Box box{0, 0, double(w), double(h)};
    if (t % 3 == 1) {
      box.x0 = (rng() % 1000) / 1000.0 * w * 0.5;
      box.y0 = (rng() % 1000) / 1000.0 * h * 0.5;
      box.x1 = box.x0 + (w - box.x0) * (0.1 + 0.9 * (rng() % 1000) / 1000.0);
      box.y1 = box.y0 + (h - box.y0) * (0.1 + 0.9 * (rng() % 1000) / 1000.0);
    }
    SCOPED_TRACE(t);
    check(rng, w, h, ow, oh, box, t % 2 == 0);
  }
}

TEST(MediaResizeReference, EdgeCases) {
  std::mt19937 rng(5);
  check(rng, 1, 1, 288, 288, Box{0, 0, 1, 1}, false);      // upscale a single pixel
  check(rng, 1000, 3, 2, 1, Box{0, 0, 1000, 3}, false);    // 500x reduction: > 1000 taps
  check(rng, 77, 64, 77, 64, Box{0, 0, 77, 64}, true);     // no pass needed: a copy
  check(rng, 77, 64, 77, 30, Box{0, 0, 77, 64}, true);     // vertical only
  check(rng, 77, 64, 40, 64, Box{0, 0, 77, 64}, true);     // horizontal only
  check(rng, 300, 200, 288, 288, Box{0.5, 1.25, 299.5, 180}, false);
}

TEST(MediaResizeReference, FlipMirrorsTheWindow) {
  std::mt19937 rng(9);
  std::vector<uint8_t> src(size_t(50) * 40 * 3);
  for (auto& v : src) v = uint8_t(rng());
  ResizeScratch rs;
  std::vector<uint8_t> a(size_t(31) * 17 * 3), b(a.size());
  resize_rgb8(src.data(), 50, 40, 150, Box{0, 0, 50, 40}, 31, 17, Window{0, 0, 31, 17}, a.data(), 93, rs, false);
  resize_rgb8(src.data(), 50, 40, 150, Box{0, 0, 50, 40}, 31, 17, Window{0, 0, 31, 17}, b.data(), 93, rs, true);
  for (int y = 0; y < 17; ++y)
    for (int x = 0; x < 31; ++x)
      for (int c = 0; c < 3; ++c) ASSERT_EQ(a[(y * 31 + x) * 3 + c], b[(y * 31 + 30 - x) * 3 + c]);
}

}  // namespace
}  // namespace bt::media

namespace bt::media {
namespace {

TEST(MediaResizeReference, WindowOfHugeOutputNeedsNoHugeTables) {
  // A 2x1 strip "resized" to 400M x 288 (what an extreme aspect gives): only the window is computed.
  const std::vector<uint8_t> src = {10, 20, 30, 10, 20, 30};
  ResizeScratch rs;
  std::vector<uint8_t> out(size_t(288) * 288 * 3);
  resize_rgb8(src.data(), 2, 1, 6, Box{0, 0, 2, 1}, 400000000, 288, Window{200000000, 0, 288, 288}, out.data(),
              288 * 3, rs);
  for (size_t i = 0; i < out.size(); i += 3) {
    ASSERT_EQ(out[i], 10);
    ASSERT_EQ(out[i + 1], 20);
    ASSERT_EQ(out[i + 2], 30);
  }
}

}  // namespace
}  // namespace bt::media

#include <hwy/targets.h>

namespace bt::media {
namespace {

// Every SIMD target the CPU supports (and the portable fallback) must give the same exact result.
TEST(MediaResizeReference, EveryHighwayTargetIsExact) {
  const int64_t supported = hwy::SupportedTargets();
  int tried = 0;
  for (int64_t bit = 1; bit != 0 && bit <= supported; bit <<= 1) {
    if (!(supported & bit)) continue;
    hwy::SetSupportedTargetsForTest(bit);
    SCOPED_TRACE(hwy::TargetName(bit));
    std::mt19937 rng(21);
    for (int t = 0; t < 25; ++t)
      check(rng, 1 + int(rng() % 90), 1 + int(rng() % 90), 1 + int(rng() % 70), 1 + int(rng() % 70),
            Box{0, 0, 0, 0}, t % 2 == 0);
    std::vector<uint8_t> hwc(size_t(29) * 3 * 3);
    for (auto& v : hwc) v = uint8_t(rng());
    std::vector<float> chw(hwc.size());
    normalize_hwc_to_chw(hwc.data(), 29, 3, chw.data());
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 29 * 3; ++i)
        ASSERT_EQ(chw[c * 87 + i], (float(hwc[i * 3 + c]) / 255.0f - kClipMean[c]) / kClipStd[c]);
    ++tried;
  }
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_GE(tried, 1);
}

}  // namespace
}  // namespace bt::media
