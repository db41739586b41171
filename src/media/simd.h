// The vectorised inner loops of the media path (Highway, dispatched at run time to the best target the CPU
// has: SSE4 / AVX2 / AVX-512, capped by ONEDNN_MAX_CPU_ISA). Each is exact integer or IEEE float arithmetic, so every target gives
// bit-identical results.
#pragma once
#include <cstddef>
#include <cstdint>

namespace bt::media {

// The Highway target the loops below run on ("AVX3", "AVX2", "SSE4", ...): the best this CPU has, capped by
// ONEDNN_MAX_CPU_ISA (common/cpu_isa.h).
const char* simd_target();

// out[i] = clip8((kFixedHalf + sum_j w[j] * rows[j][i]) >> kPrecisionBits), i < n: Pillow's 8-bit
// fixed-point convolution step, with the same weight for a whole run of bytes.
void mac_rows_u8(const uint8_t* const* rows, const int32_t* w, int k, size_t n, uint8_t* out);

// The horizontal pass over a block of transposed source rows: for each output column o < nw, with bounds
// b = bounds[o] (first relative to column 0 of `cols`) and weights fixed[o * taps ...],
//   hout[o * col_bytes + i] = clip8(half + sum_k fixed[o * taps + k] * cols[(b.first + k) * col_bytes + i]),
// i < n. cols/hout are column-major: col_bytes apart, n <= col_bytes valid bytes each.
struct ResampleBounds;
void horizontal_block_u8(const uint8_t* cols, size_t col_bytes, size_t n, const ResampleBounds* bounds,
                         const int32_t* fixed, int taps, int nw, uint8_t* hout);

// RGB8 rows <-> column-major blocks, the layout change around horizontal_block_u8:
//  rows_to_cols: cols[x * col_bytes + r * 3 + c] = src[r * stride + x * 3 + c], r < nr, x < nx. May write up
//    to 4 bytes past each column's nr * 3 (col_bytes must leave room); reads only bytes of the nx pixels
//    plus up to 15 bytes past them when `overread_ok` pixels follow each row (0: reads nothing past).
//  cols_to_rows: dst[r * dst_stride + x * 3 + c] = cols[x * col_bytes + r * 3 + c]; writes nothing outside.
void rows_to_cols_rgb8(const uint8_t* src, size_t stride, int nr, int nx, int overread_ok, uint8_t* cols,
                       size_t col_bytes);
void cols_to_rows_rgb8(const uint8_t* cols, size_t col_bytes, int nr, int nx, uint8_t* dst, size_t dst_stride);

// chw[c * n + i] = (hwc[3 * i + c] / 255.f - mean[c]) / std[c], float32 throughout as torchvision's
// ToTensor + Normalize compute it.
void normalize_u8_hwc_to_chw(const uint8_t* hwc, size_t n, float* chw, const float mean[3], const float std[3]);

}  // namespace bt::media
