// Highway's foreach_target re-includes this file once per target; only the HWY_ONCE part is compiled once.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "media/simd.cpp"
#include "hwy/foreach_target.h"  // must come before highway.h
#include "hwy/highway.h"
#include <cstring>
#include <vector>
#include "media/resample_coeffs.h"
#include "media/simd.h"

HWY_BEFORE_NAMESPACE();
namespace bt::media {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// V accumulators in flight over V consecutive vectors of output: the weights and row pointers are loaded
// once per tap for all of them, and the V add chains hide the multiply latency.
template <int V, class D32>
HWY_INLINE void MacVectors(D32 d32, const uint8_t* const* rows, const int32_t* w, int k, size_t i, uint8_t* out) {
  const hn::Rebind<uint8_t, D32> d8;
  const size_t N = hn::Lanes(d32);
  hn::Vec<D32> acc[V];
  for (int v = 0; v < V; ++v) acc[v] = hn::Set(d32, kFixedHalf);
  for (int j = 0; j < k; ++j) {
    const auto wj = hn::Set(d32, w[j]);
    const uint8_t* p = rows[j] + i;
    for (int v = 0; v < V; ++v) acc[v] = hn::Add(acc[v], hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, p + v * N)), wj));
  }
  for (int v = 0; v < V; ++v)
    hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(acc[v])), d8, out + i + v * N);
}

HWY_INLINE void MacRun(const uint8_t* const* rows, const int32_t* w, int k, size_t n, uint8_t* out) {
  const hn::ScalableTag<int32_t> d32;
  const size_t N = hn::Lanes(d32);
  size_t i = 0;
  for (; i + 8 * N <= n; i += 8 * N) MacVectors<8>(d32, rows, w, k, i, out);
  switch ((n - i) / N) {
    case 7: MacVectors<7>(d32, rows, w, k, i, out); break;
    case 6: MacVectors<6>(d32, rows, w, k, i, out); break;
    case 5: MacVectors<5>(d32, rows, w, k, i, out); break;
    case 4: MacVectors<4>(d32, rows, w, k, i, out); break;
    case 3: MacVectors<3>(d32, rows, w, k, i, out); break;
    case 2: MacVectors<2>(d32, rows, w, k, i, out); break;
    case 1: MacVectors<1>(d32, rows, w, k, i, out); break;
    default: break;
  }
  i += (n - i) / N * N;
  for (; i < n; ++i) {
    int32_t acc = kFixedHalf;
    for (int j = 0; j < k; ++j) acc += w[j] * rows[j][i];
    out[i] = clip8_fixed(acc);
  }
}

void MacRowsU8(const uint8_t* const* rows, const int32_t* w, int k, size_t n, uint8_t* out) {
  MacRun(rows, w, k, n, out);
}

void HorizontalBlockU8(const uint8_t* cols, size_t col_bytes, size_t n, const ResampleBounds* bounds,
                       const int32_t* fixed, int taps, int nw, uint8_t* hout) {
  std::vector<const uint8_t*> rows(static_cast<size_t>(taps));
  for (int o = 0; o < nw; ++o) {
    const ResampleBounds b = bounds[o];
    for (int j = 0; j < b.count; ++j) rows[j] = cols + static_cast<size_t>(b.first + j) * col_bytes;
    MacRun(rows.data(), fixed + static_cast<size_t>(o) * taps, b.count, n, hout + static_cast<size_t>(o) * col_bytes);
  }
}

#if HWY_TARGET != HWY_SCALAR
// 4 rows x 4 pixels at a time with 128-bit vectors: expand RGB to RGBx words, transpose the 4x4 words,
// compress back to RGB. Stores are 16 bytes wide with 12 useful; the spill is overwritten by the next
// store (or lands in the column padding).
HWY_INLINE void Transpose4x4U32(hn::Vec128<uint32_t>& a, hn::Vec128<uint32_t>& b, hn::Vec128<uint32_t>& c,
                                hn::Vec128<uint32_t>& d) {
  const hn::Full128<uint32_t> d32;
  const hn::Full128<uint64_t> d64;
  const auto t0 = hn::InterleaveLower(d32, a, b), t1 = hn::InterleaveLower(d32, c, d);
  const auto t2 = hn::InterleaveUpper(d32, a, b), t3 = hn::InterleaveUpper(d32, c, d);
  a = hn::BitCast(d32, hn::InterleaveLower(d64, hn::BitCast(d64, t0), hn::BitCast(d64, t1)));
  b = hn::BitCast(d32, hn::InterleaveUpper(d64, hn::BitCast(d64, t0), hn::BitCast(d64, t1)));
  c = hn::BitCast(d32, hn::InterleaveLower(d64, hn::BitCast(d64, t2), hn::BitCast(d64, t3)));
  d = hn::BitCast(d32, hn::InterleaveUpper(d64, hn::BitCast(d64, t2), hn::BitCast(d64, t3)));
}

struct RgbShuffles {
  hn::Vec128<uint8_t> expand, compress;
  RgbShuffles() {
    const hn::Full128<uint8_t> d8;
    alignas(16) static constexpr uint8_t kExpand[16] = {0, 1, 2, 0, 3, 4, 5, 0, 6, 7, 8, 0, 9, 10, 11, 0};
    alignas(16) static constexpr uint8_t kCompress[16] = {0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 0, 0, 0, 0};
    expand = hn::Load(d8, kExpand);
    compress = hn::Load(d8, kCompress);
  }
};
#endif

void RowsToColsRgb8(const uint8_t* src, size_t stride, int nr, int nx, int overread_ok, uint8_t* cols,
                    size_t col_bytes) {
  int r0 = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::Full128<uint8_t> d8;
  const hn::Full128<uint32_t> d32;
  const RgbShuffles sh;
  // A 16-byte load at pixel x reads pixels x..x+5 (and a byte of x+5): stay where that is inside the data.
  const int nx4 = overread_ok >= 2 ? nx / 4 * 4 : std::max(0, (nx - 2) / 4 * 4);
  const int nr4 = nr / 4 * 4;
  // Pixel groups outer, rows inner: each group of 4 columns is written completely before the next.
  for (int x = 0; x < nx4; x += 4) {
    uint8_t* cp = cols + static_cast<size_t>(x) * col_bytes;
    for (int r = 0; r < nr4; r += 4, cp += 12) {
      const uint8_t* s = src + static_cast<size_t>(r) * stride + x * 3;
      auto a = hn::BitCast(d32, hn::TableLookupBytes(hn::LoadU(d8, s), sh.expand));
      auto b = hn::BitCast(d32, hn::TableLookupBytes(hn::LoadU(d8, s + stride), sh.expand));
      auto c = hn::BitCast(d32, hn::TableLookupBytes(hn::LoadU(d8, s + 2 * stride), sh.expand));
      auto d = hn::BitCast(d32, hn::TableLookupBytes(hn::LoadU(d8, s + 3 * stride), sh.expand));
      Transpose4x4U32(a, b, c, d);
      hn::StoreU(hn::TableLookupBytes(hn::BitCast(d8, a), sh.compress), d8, cp);
      hn::StoreU(hn::TableLookupBytes(hn::BitCast(d8, b), sh.compress), d8, cp + col_bytes);
      hn::StoreU(hn::TableLookupBytes(hn::BitCast(d8, c), sh.compress), d8, cp + 2 * col_bytes);
      hn::StoreU(hn::TableLookupBytes(hn::BitCast(d8, d), sh.compress), d8, cp + 3 * col_bytes);
    }
  }
  for (int r = 0; r < nr4; ++r)
    for (int x = nx4; x < nx; ++x)
      std::memcpy(cols + static_cast<size_t>(x) * col_bytes + r * 3, src + r * stride + x * 3, 3);
  r0 = nr4;
#endif
  for (int r = r0; r < nr; ++r)
    for (int x = 0; x < nx; ++x)
      std::memcpy(cols + static_cast<size_t>(x) * col_bytes + r * 3, src + r * stride + x * 3, 3);
}

void ColsToRowsRgb8(const uint8_t* cols, size_t col_bytes, int nr, int nx, uint8_t* dst, size_t dst_stride) {
  int r0 = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::Full128<uint8_t> d8;
  const hn::Full128<uint32_t> d32;
  const RgbShuffles sh;
  // Each 16-byte store spills 4 bytes (a pixel and a byte) past its 4 pixels, which must stay in the row:
  // the last groups of a row go byte-wise.
  const int nx4 = std::max(0, (nx - 2) / 4 * 4);
  // Loads read 16 bytes from r0 * 3: within the column as long as the column has 4 spare bytes.
  for (; r0 + 4 <= nr; r0 += 4) {
    for (int x = 0; x < nx4; x += 4) {
      const uint8_t* cp = cols + static_cast<size_t>(x) * col_bytes + r0 * 3;
      auto a = hn::BitCast(d32, hn::TableLookupBytes(hn::LoadU(d8, cp), sh.expand));
      auto b = hn::BitCast(d32, hn::TableLookupBytes(hn::LoadU(d8, cp + col_bytes), sh.expand));
      auto c = hn::BitCast(d32, hn::TableLookupBytes(hn::LoadU(d8, cp + 2 * col_bytes), sh.expand));
      auto d = hn::BitCast(d32, hn::TableLookupBytes(hn::LoadU(d8, cp + 3 * col_bytes), sh.expand));
      Transpose4x4U32(a, b, c, d);
      uint8_t* dp = dst + static_cast<size_t>(r0) * dst_stride + x * 3;
      hn::StoreU(hn::TableLookupBytes(hn::BitCast(d8, a), sh.compress), d8, dp);
      hn::StoreU(hn::TableLookupBytes(hn::BitCast(d8, b), sh.compress), d8, dp + dst_stride);
      hn::StoreU(hn::TableLookupBytes(hn::BitCast(d8, c), sh.compress), d8, dp + 2 * dst_stride);
      hn::StoreU(hn::TableLookupBytes(hn::BitCast(d8, d), sh.compress), d8, dp + 3 * dst_stride);
    }
    for (int r = r0; r < r0 + 4; ++r)
      for (int x = nx4; x < nx; ++x)
        std::memcpy(dst + r * dst_stride + x * 3, cols + static_cast<size_t>(x) * col_bytes + r * 3, 3);
  }
#endif
  for (int r = r0; r < nr; ++r)
    for (int x = 0; x < nx; ++x)
      std::memcpy(dst + r * dst_stride + x * 3, cols + static_cast<size_t>(x) * col_bytes + r * 3, 3);
}

void NormalizeU8HwcToChw(const uint8_t* hwc, size_t n, float* chw, const float* mean, const float* std) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<int32_t, decltype(df)> d32;
  const hn::Rebind<uint8_t, decltype(df)> d8;
  const size_t N = hn::Lanes(df);
  const auto k255 = hn::Set(df, 255.0f);
  const auto m0 = hn::Set(df, mean[0]), m1 = hn::Set(df, mean[1]), m2 = hn::Set(df, mean[2]);
  const auto s0 = hn::Set(df, std[0]), s1 = hn::Set(df, std[1]), s2 = hn::Set(df, std[2]);
  float* o0 = chw;
  float* o1 = chw + n;
  float* o2 = chw + 2 * n;
  size_t i = 0;
  for (; i + N <= n; i += N) {
    hn::Vec<decltype(d8)> r, g, b;
    hn::LoadInterleaved3(d8, hwc + 3 * i, r, g, b);
    const auto fr = hn::ConvertTo(df, hn::PromoteTo(d32, r));
    const auto fg = hn::ConvertTo(df, hn::PromoteTo(d32, g));
    const auto fb = hn::ConvertTo(df, hn::PromoteTo(d32, b));
    hn::StoreU(hn::Div(hn::Sub(hn::Div(fr, k255), m0), s0), df, o0 + i);
    hn::StoreU(hn::Div(hn::Sub(hn::Div(fg, k255), m1), s1), df, o1 + i);
    hn::StoreU(hn::Div(hn::Sub(hn::Div(fb, k255), m2), s2), df, o2 + i);
  }
  for (; i < n; ++i) {
    o0[i] = (static_cast<float>(hwc[3 * i]) / 255.0f - mean[0]) / std[0];
    o1[i] = (static_cast<float>(hwc[3 * i + 1]) / 255.0f - mean[1]) / std[1];
    o2[i] = (static_cast<float>(hwc[3 * i + 2]) / 255.0f - mean[2]) / std[2];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace bt::media
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "common/cpu_isa.h"

namespace bt::media {
HWY_EXPORT(MacRowsU8);

namespace {
// Highway takes the best target the CPU has; ONEDNN_MAX_CPU_ISA caps it as it caps every kernel (common/cpu_isa.h).
// Done before the first dispatch (each entry point asks; the answer is computed once).
bool follow_cpu_cap() {
  static const bool capped = [] {
    int64_t off = 0;
    if (cpu_isa().level != CpuLevel::kAvx512) off |= HWY_AVX3 | HWY_AVX3_DL;
    if (cpu_isa().level == CpuLevel::kBaseline) off |= HWY_AVX2;
    if (off) hwy::DisableTargets(off);
    return off != 0;
  }();
  return capped;
}
}  // namespace

const char* simd_target() {
  follow_cpu_cap();
  const int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
  return hwy::TargetName(targets & -targets);  // the lowest bit is the best target
}
HWY_EXPORT(NormalizeU8HwcToChw);
HWY_EXPORT(HorizontalBlockU8);
HWY_EXPORT(RowsToColsRgb8);
HWY_EXPORT(ColsToRowsRgb8);

void rows_to_cols_rgb8(const uint8_t* src, size_t stride, int nr, int nx, int overread_ok, uint8_t* cols,
                       size_t col_bytes) {
  follow_cpu_cap();
  HWY_DYNAMIC_DISPATCH(RowsToColsRgb8)(src, stride, nr, nx, overread_ok, cols, col_bytes);
}
void cols_to_rows_rgb8(const uint8_t* cols, size_t col_bytes, int nr, int nx, uint8_t* dst, size_t dst_stride) {
  follow_cpu_cap();
  HWY_DYNAMIC_DISPATCH(ColsToRowsRgb8)(cols, col_bytes, nr, nx, dst, dst_stride);
}

void horizontal_block_u8(const uint8_t* cols, size_t col_bytes, size_t n, const ResampleBounds* bounds,
                         const int32_t* fixed, int taps, int nw, uint8_t* hout) {
  follow_cpu_cap();
  HWY_DYNAMIC_DISPATCH(HorizontalBlockU8)(cols, col_bytes, n, bounds, fixed, taps, nw, hout);
}

void mac_rows_u8(const uint8_t* const* rows, const int32_t* w, int k, size_t n, uint8_t* out) {
  follow_cpu_cap();
  HWY_DYNAMIC_DISPATCH(MacRowsU8)(rows, w, k, n, out);
}

void normalize_u8_hwc_to_chw(const uint8_t* hwc, size_t n, float* chw, const float mean[3], const float std[3]) {
  follow_cpu_cap();
  HWY_DYNAMIC_DISPATCH(NormalizeU8HwcToChw)(hwc, n, chw, mean, std);
}
}  // namespace bt::media
#endif
