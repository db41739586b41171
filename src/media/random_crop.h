// torchvision 0.14's RandomResizedCrop.get_params and RandomHorizontalFlip, with the random draws taken
// from a small PRNG seeded by the sample's seed (no global state: the same seed gives the same crop in any
// thread, any worker count).
#pragma once
#include <cstdint>

namespace bt::media {

// SplitMix64: tiny, fast, and statistically fine for picking crops.
class SampleRng {
 public:
  explicit SampleRng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  int randint(int lo, int hi_exclusive) {  // [lo, hi)
    const uint64_t span = static_cast<uint64_t>(hi_exclusive - lo);
    return lo + static_cast<int>(next() % span);
  }

 private:
  uint64_t s_;
};

struct CropRect {
  int top, left, height, width;
};

// Within [0, width) x [0, height), as torchvision: 10 attempts of (log-uniform ratio, uniform area scale),
// else a center crop of the ratio clamped to [ratio_min, ratio_max].
CropRect random_resized_crop_params(int width, int height, double scale_min, double scale_max, double ratio_min,
                                    double ratio_max, SampleRng& rng);

}  // namespace bt::media
