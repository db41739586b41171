// libjpeg-turbo's default decode of YCbCr planes to RGB, one output pixel at a time, shared by the CUDA
// kernel (cuda/ycc_convert.h) and its CPU reference (cuda/chroma_upsample_ref.h) so both run the very same
// integer operations: "fancy" (triangular) chroma upsampling as jdsample.c does it (h2v1, h1v2, h2v2, with
// libjpeg's edge replication and rounding biases) and ycc_rgb_convert of jdcolor.c (16-bit fixed point).
// The per-pixel form is a transcription of libjpeg's row loops: clamping a neighbour index to the plane
// reproduces both its first/last-column special cases and the context rows jdmainct.c replicates at the
// image top and bottom. Checked bit for bit against tjDecompress2 (tests/cuda/chroma_upsample_ref_test.cpp).
#pragma once
#include <cstdint>

#include "cuda/pixel_math.h"  // BT_HD

namespace bt::cuda {

// A decoded JPEG's planes before upsampling: Y is width x height; Cb and Cr are chroma_w x chroma_h with
// chroma_w = ceil(width / h_factor), chroma_h = ceil(height / v_factor) (libjpeg's downsampled sizes), factors
// 1 or 2. Pitches are in bytes (>= the plane widths).
struct YccPlanes {
  const uint8_t* y = nullptr;
  const uint8_t* cb = nullptr;
  const uint8_t* cr = nullptr;
  int y_pitch = 0, c_pitch = 0;
  int width = 0, height = 0;
  int chroma_w = 0, chroma_h = 0;
  int h_factor = 1, v_factor = 1;
};

BT_HD int ycc_min(int a, int b) { return a < b ? a : b; }
BT_HD int ycc_max(int a, int b) { return a > b ? a : b; }

// One upsampled chroma sample at output pixel (x, y). jinit_upsampler picks the fancy methods for h2v1 and
// h2v2 only when the plane is wider than 2 samples (else plain replication); h1v2 is always fancy.
BT_HD int fancy_chroma(const uint8_t* p, int pitch, const YccPlanes& s, int x, int y) {
  const int j = x / s.h_factor, i = y / s.v_factor;
  const uint8_t* row = p + static_cast<long>(i) * pitch;
  if (s.v_factor == 1) {
    if (s.h_factor == 1 || s.chroma_w <= 2) return row[j];
    // h2v1: 3/4 nearer + 1/4 further; bias 1 on the left output, 2 on the right one.
    const int far = (x & 1) ? row[ycc_min(j + 1, s.chroma_w - 1)] : row[ycc_max(j - 1, 0)];
    return (3 * row[j] + far + 1 + (x & 1)) >> 2;
  }
  if (s.h_factor == 2 && s.chroma_w <= 2) return row[j];
  // Vertically the further row is the one above for even output rows, below for odd (clamped: libjpeg's
  // replicated context rows).
  const int far_i = (y & 1) ? ycc_min(i + 1, s.chroma_h - 1) : ycc_max(i - 1, 0);
  const uint8_t* far_row = p + static_cast<long>(far_i) * pitch;
  if (s.h_factor == 1) return (3 * row[j] + far_row[j] + 1 + (y & 1)) >> 2;  // h1v2: bias 1 above, 2 below
  // h2v2: column sums 3*near + far, then 3/4 + 1/4 across columns; bias 8 on even outputs, 7 on odd.
  const int jn = (x & 1) ? ycc_min(j + 1, s.chroma_w - 1) : ycc_max(j - 1, 0);
  const int this_sum = 3 * row[j] + far_row[j], next_sum = 3 * row[jn] + far_row[jn];
  return (3 * this_sum + next_sum + ((x & 1) ? 7 : 8)) >> 4;
}

// jdcolor.c's fixed point: SCALEBITS 16, FIX(x) = (long)(x * 65536 + 0.5).
inline constexpr int kYccScaleBits = 16;
inline constexpr int32_t kYccOneHalf = int32_t{1} << (kYccScaleBits - 1);
constexpr int32_t ycc_fix(double x) { return static_cast<int32_t>(x * (1 << kYccScaleBits) + 0.5); }
inline constexpr int32_t kCrToR = ycc_fix(1.40200), kCbToB = ycc_fix(1.77200);
inline constexpr int32_t kCrToG = ycc_fix(0.71414), kCbToG = ycc_fix(0.34414);

BT_HD uint8_t ycc_clamp(int v) { return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v)); }

// ycc_rgb_convert: its table entries computed inline (the same expressions), then range-limited.
BT_HD void ycc_to_rgb(int y, int cb, int cr, uint8_t out[3]) {
  const int32_t x_cb = cb - 128, x_cr = cr - 128;
  out[0] = ycc_clamp(y + ((kCrToR * x_cr + kYccOneHalf) >> kYccScaleBits));
  out[1] = ycc_clamp(y + ((-kCbToG * x_cb + kYccOneHalf - kCrToG * x_cr) >> kYccScaleBits));
  out[2] = ycc_clamp(y + ((kCbToB * x_cb + kYccOneHalf) >> kYccScaleBits));
}

// The RGB pixel libjpeg-turbo's default decode (no TJFLAG_FASTUPSAMPLE) gives at (x, y).
BT_HD void ycc_pixel(const YccPlanes& s, int x, int y, uint8_t out[3]) {
  const int luma = s.y[static_cast<long>(y) * s.y_pitch + x];
  ycc_to_rgb(luma, fancy_chroma(s.cb, s.c_pitch, s, x, y), fancy_chroma(s.cr, s.c_pitch, s, x, y), out);
}

}  // namespace bt::cuda
