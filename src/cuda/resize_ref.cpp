#include "cuda/resize_ref.h"

#include <vector>

#include "cuda/pixel_math.h"
#include "media/color_jitter_math.h"

namespace bt::cuda {

void reference_sample_u8(const BatchPlan& plan, size_t i, const uint8_t* input, uint8_t* out_hwc) {
  const SamplePlan& s = plan.samples[i];
  const int n = plan.image_size;
  const uint8_t* img = input + s.in_offset;
  const int32_t* xb = plan.coef.data() + s.x_coef;
  const int32_t* xw = xb + 2 * n;
  const int32_t* yb = plan.coef.data() + s.y_coef;
  const int32_t* yw = yb + 2 * n;
  // Kernel 1: horizontal pass over the needed source rows.
  std::vector<uint8_t> mid(static_cast<size_t>(s.rows) * n * 3);
  for (int r = 0; r < s.rows; ++r) {
    const uint8_t* row = img + static_cast<size_t>(s.row0 + r) * s.width * 3;
    for (int o = 0; o < n; ++o)
      tap_sum_rgb(row + xb[2 * o] * 3, 3, xw + static_cast<size_t>(o) * s.x_taps, xb[2 * o + 1],
                  &mid[(static_cast<size_t>(r) * n + o) * 3]);
  }
  // Kernel 2: vertical pass; the flip picks the mirrored column.
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      const int sx = s.flip ? n - 1 - x : x;
      tap_sum_rgb(&mid[(static_cast<size_t>(yb[2 * y]) * n + sx) * 3], n * 3, yw + static_cast<size_t>(y) * s.y_taps,
                  yb[2 * y + 1], &out_hwc[(static_cast<size_t>(y) * n + x) * 3]);
    }
  if (!media::jitter_any(s.jitter)) return;
  // Kernel 2's jitter variant sums the contrast terms (integer atomics: any order gives this sum), kernel 3 jitters
  // each pixel with their mean.
  const size_t pixels = static_cast<size_t>(n) * n;
  uint64_t sum = 0;
  if (s.jitter.contrast != 1.0f)
    for (size_t p = 0; p < pixels; ++p) sum += media::jitter_mean_term(s.jitter, &out_hwc[p * 3]);
  const float mean = media::jitter_mean(sum, pixels);
  for (size_t p = 0; p < pixels; ++p) media::jitter_pixel(s.jitter, mean, &out_hwc[p * 3]);
}

void reference_run(const BatchPlan& plan, const uint8_t* input, void* out) {
  const int n = plan.image_size;
  const size_t plane = static_cast<size_t>(n) * n;
  std::vector<uint8_t> hwc(plane * 3);
  for (size_t i = 0; i < plan.samples.size(); ++i) {
    reference_sample_u8(plan, i, input, hwc.data());
    for (int c = 0; c < 3; ++c)
      for (size_t p = 0; p < plane; ++p) {
        const float v = plan.lut[c][hwc[p * 3 + c]];
        const size_t at = (i * 3 + c) * plane + p;
        if (plan.type == OutputType::kFloat32)
          static_cast<float*>(out)[at] = v;
        else
          static_cast<uint16_t*>(out)[at] = float_to_bf16(v);
      }
  }
}

}  // namespace bt::cuda
