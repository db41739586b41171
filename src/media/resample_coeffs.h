// Pillow's antialiased resampling filter weights, bit for bit (Pillow 9.x, libImaging/Resample.c).
//
// Pillow resizes in two separable passes (horizontal, then vertical, with a uint8 image in between) and
// for 8-bit images uses fixed-point weights with kPrecisionBits fractional bits. Each output pixel o reads
// input pixels [bounds[o].first, bounds[o].first + bounds[o].count) with weights
// weights[o * taps + k], k < count; the rest of its `taps` weights are zero. The same table serves the CPU
// kernel (media/resize.*) and the CUDA kernel (cuda/), so both reproduce Pillow.
#pragma once
#include <cstdint>
#include <vector>

namespace bt::media {

enum class Filter { kBicubic, kBilinear };

inline constexpr int kPrecisionBits = 32 - 8 - 2;

struct ResampleBounds {
  int first;
  int count;
};

struct ResampleCoeffs {
  int in_size = 0;
  int out_size = 0;
  int taps = 0;                        // coefficients stored per output pixel
  std::vector<ResampleBounds> bounds;  // [out_size]
  std::vector<double> weights;         // [out_size * taps], normalised to sum 1 (float paths)
  std::vector<int32_t> fixed;          // [out_size * taps], Pillow's rounded fixed-point (8-bit paths)
};

// Weights for resampling the input span [in0, in1) (in input pixels; Pillow's `box`) onto out_size pixels.
// Resizing a whole axis is in0 = 0, in1 = in_size.
ResampleCoeffs compute_resample_coeffs(int in_size, double in0, double in1, int out_size,
                                       Filter filter = Filter::kBicubic);

// The same weights for outputs [out_begin, out_begin + out_count) only (entry k is output out_begin + k;
// out_size stays the full output size): a crop of the result needs no table for the whole axis.
ResampleCoeffs compute_resample_coeffs_range(int in_size, double in0, double in1, int out_size, int out_begin,
                                             int out_count, Filter filter = Filter::kBicubic);

// Pillow's rounding of an accumulated fixed-point sum (started at 1 << (kPrecisionBits - 1)) back to uint8.
inline uint8_t clip8_fixed(int32_t acc) {
  int32_t v = acc >> kPrecisionBits;
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

inline constexpr int32_t kFixedHalf = 1 << (kPrecisionBits - 1);

}  // namespace bt::media
