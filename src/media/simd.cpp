// Highway's foreach_target re-includes this file once per target; only the HWY_ONCE part is compiled once.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "media/simd.cpp"
#include "hwy/foreach_target.h"  // must come before highway.h
#include "hwy/highway.h"
#include "media/resample_coeffs.h"
#include "media/simd.h"

HWY_BEFORE_NAMESPACE();
namespace bt::media {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void MacRowsU8(const uint8_t* const* rows, const int32_t* w, int k, size_t n, uint8_t* out) {
  const hn::ScalableTag<int32_t> d32;
  const hn::Rebind<uint8_t, decltype(d32)> d8;
  const size_t N = hn::Lanes(d32);
  size_t i = 0;
  // Two vectors per iteration keep two independent accumulator chains in flight.
  for (; i + 2 * N <= n; i += 2 * N) {
    auto a0 = hn::Set(d32, kFixedHalf), a1 = a0;
    for (int j = 0; j < k; ++j) {
      const auto wj = hn::Set(d32, w[j]);
      a0 = hn::Add(a0, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, rows[j] + i)), wj));
      a1 = hn::Add(a1, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, rows[j] + i + N)), wj));
    }
    hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(a0)), d8, out + i);
    hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(a1)), d8, out + i + N);
  }
  for (; i + N <= n; i += N) {
    auto a0 = hn::Set(d32, kFixedHalf);
    for (int j = 0; j < k; ++j)
      a0 = hn::Add(a0, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, rows[j] + i)), hn::Set(d32, w[j])));
    hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(a0)), d8, out + i);
  }
  for (; i < n; ++i) {
    int32_t acc = kFixedHalf;
    for (int j = 0; j < k; ++j) acc += w[j] * rows[j][i];
    out[i] = clip8_fixed(acc);
  }
}

void HorizontalBlockU8(const uint8_t* cols, size_t col_bytes, size_t n, const ResampleBounds* bounds,
                       const int32_t* fixed, int taps, int nw, uint8_t* hout) {
  const hn::ScalableTag<int32_t> d32;
  const hn::Rebind<uint8_t, decltype(d32)> d8;
  const size_t N = hn::Lanes(d32);
  for (int o = 0; o < nw; ++o) {
    const ResampleBounds b = bounds[o];
    const int32_t* w = fixed + static_cast<size_t>(o) * taps;
    const uint8_t* c0 = cols + static_cast<size_t>(b.first) * col_bytes;
    uint8_t* out = hout + static_cast<size_t>(o) * col_bytes;
    size_t i = 0;
    // Four accumulators per pass: a whole 32-row block column is 6 vectors on AVX-512, 12 on AVX2.
    for (; i + 4 * N <= n; i += 4 * N) {
      auto a0 = hn::Set(d32, kFixedHalf), a1 = a0, a2 = a0, a3 = a0;
      const uint8_t* p = c0 + i;
      for (int k = 0; k < b.count; ++k, p += col_bytes) {
        const auto wk = hn::Set(d32, w[k]);
        a0 = hn::Add(a0, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, p)), wk));
        a1 = hn::Add(a1, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, p + N)), wk));
        a2 = hn::Add(a2, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, p + 2 * N)), wk));
        a3 = hn::Add(a3, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, p + 3 * N)), wk));
      }
      hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(a0)), d8, out + i);
      hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(a1)), d8, out + i + N);
      hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(a2)), d8, out + i + 2 * N);
      hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(a3)), d8, out + i + 3 * N);
    }
    for (; i + N <= n; i += N) {
      auto a0 = hn::Set(d32, kFixedHalf);
      const uint8_t* p = c0 + i;
      for (int k = 0; k < b.count; ++k, p += col_bytes)
        a0 = hn::Add(a0, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, p)), hn::Set(d32, w[k])));
      hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(a0)), d8, out + i);
    }
    for (; i < n; ++i) {
      int32_t acc = kFixedHalf;
      for (int k = 0; k < b.count; ++k) acc += w[k] * c0[i + k * col_bytes];
      out[i] = clip8_fixed(acc);
    }
  }
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
namespace bt::media {
HWY_EXPORT(MacRowsU8);
HWY_EXPORT(NormalizeU8HwcToChw);
HWY_EXPORT(HorizontalBlockU8);

void horizontal_block_u8(const uint8_t* cols, size_t col_bytes, size_t n, const ResampleBounds* bounds,
                         const int32_t* fixed, int taps, int nw, uint8_t* hout) {
  HWY_DYNAMIC_DISPATCH(HorizontalBlockU8)(cols, col_bytes, n, bounds, fixed, taps, nw, hout);
}

void mac_rows_u8(const uint8_t* const* rows, const int32_t* w, int k, size_t n, uint8_t* out) {
  HWY_DYNAMIC_DISPATCH(MacRowsU8)(rows, w, k, n, out);
}

void normalize_u8_hwc_to_chw(const uint8_t* hwc, size_t n, float* chw, const float mean[3], const float std[3]) {
  HWY_DYNAMIC_DISPATCH(NormalizeU8HwcToChw)(hwc, n, chw, mean, std);
}
}  // namespace bt::media
#endif
