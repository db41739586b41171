// Compiled with -ffp-contract=off (CMakeLists.txt): the products and sums must round as the CUDA kernel's do.
#include "media/color_jitter.h"

#include <algorithm>

namespace bt::media {

JitterFactors draw_color_jitter(const std::array<double, 3>& strength, SampleRng& rng) {
  float f[3] = {1.0f, 1.0f, 1.0f};
  for (int i = 0; i < 3; ++i) {
    const double x = strength[i];
    // torch draws a float32 factor (torch.empty(1).uniform_): the float is what every step multiplies by.
    if (x > 0) f[i] = static_cast<float>(rng.uniform(std::max(0.0, 1.0 - x), 1.0 + x));
  }
  return JitterFactors{f[0], f[1], f[2]};
}

namespace {

// The grayscale's three products of each level after `level` (a level map), so a pixel's gray is three lookups
// and jitter_gray_sum.
struct GrayTables {
  float r[256], g[256], b[256];
  explicit GrayTables(const uint8_t* level) {
    for (int x = 0; x < 256; ++x) {
      r[x] = jitter_gray_r(level[x]);
      g[x] = jitter_gray_g(level[x]);
      b[x] = jitter_gray_b(level[x]);
    }
  }
  uint8_t gray(const uint8_t* px) const { return jitter_gray_sum(r[px[0]], g[px[1]], b[px[2]]); }
};

}  // namespace

// Brightness and contrast map each level on its own (given the mean), so they are one 256-entry table; saturation
// blends with the pixel's gray, so it is tabulated per term. Every entry comes from color_jitter_math.h's
// operations, composed as jitter_pixel composes them: the same results, a few lookups a pixel.
void apply_color_jitter(uint8_t* hwc, size_t pixels, const JitterFactors& f) {
  const size_t n = pixels * 3;
  uint8_t level[256];
  for (int x = 0; x < 256; ++x)
    level[x] = f.brightness != 1.0f ? jitter_brightness(f.brightness, static_cast<uint8_t>(x)) : x;
  if (f.contrast != 1.0f && pixels > 0) {
    const GrayTables t(level);  // the mean is of the grays after brightness
    uint64_t sum = 0;           // exact, as the kernel's integer atomics
    for (size_t p = 0; p < n; p += 3) sum += t.gray(hwc + p);
    const float c = f.contrast, rest = jitter_rest(c), mean = jitter_mean(sum, pixels);
    for (int x = 0; x < 256; ++x) level[x] = jitter_blend(c, rest, level[x], mean);
  }
  if (f.saturation == 1.0f) {
    for (size_t i = 0; i < n; ++i) hwc[i] = level[hwc[i]];
    return;
  }
  const GrayTables t(level);
  const float s = f.saturation, rest = jitter_rest(s);
  float scaled[256], gray_term[256];  // s * level, (1 - s) * gray
  for (int x = 0; x < 256; ++x) {
    scaled[x] = jitter_mul(s, static_cast<float>(level[x]));
    gray_term[x] = jitter_mul(rest, static_cast<float>(x));
  }
  for (size_t p = 0; p < n; p += 3) {
    const float g = gray_term[t.gray(hwc + p)];
    hwc[p] = jitter_u8(jitter_add(scaled[hwc[p]], g));
    hwc[p + 1] = jitter_u8(jitter_add(scaled[hwc[p + 1]], g));
    hwc[p + 2] = jitter_u8(jitter_add(scaled[hwc[p + 2]], g));
  }
}

}  // namespace bt::media
