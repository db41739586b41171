#include "media/random_crop.h"

#include <algorithm>
#include <cmath>

namespace bt::media {

CropRect random_resized_crop_params(int width, int height, double scale_min, double scale_max, double ratio_min,
                                    double ratio_max, SampleRng& rng) {
  const double area = static_cast<double>(width) * height;
  const double log_lo = std::log(ratio_min), log_hi = std::log(ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * rng.uniform(scale_min, scale_max);
    const double aspect = std::exp(rng.uniform(log_lo, log_hi));
    // Python's round(): half to even, which nearbyint does in the default rounding mode.
    const int w = static_cast<int>(std::nearbyint(std::sqrt(target_area * aspect)));
    const int h = static_cast<int>(std::nearbyint(std::sqrt(target_area / aspect)));
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int top = rng.randint(0, height - h + 1);
      const int left = rng.randint(0, width - w + 1);
      return {top, left, h, w};
    }
  }
  const double in_ratio = static_cast<double>(width) / height;
  const double rmin = std::min(ratio_min, ratio_max), rmax = std::max(ratio_min, ratio_max);
  int w = width, h = height;
  if (in_ratio < rmin) {
    h = static_cast<int>(std::nearbyint(w / rmin));
  } else if (in_ratio > rmax) {
    w = static_cast<int>(std::nearbyint(h * rmax));
  }
  h = std::clamp(h, 1, height);
  w = std::clamp(w, 1, width);
  return {(height - h) / 2, (width - w) / 2, h, w};
}

}  // namespace bt::media
