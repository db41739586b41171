// exp(x) in float for loops that must vectorise (bf16 kernels whose results are rounded to bf16 afterwards):
// x = n ln2 + r with |r| <= ln2/2, exp(r) by its degree-6 Taylor polynomial (relative error < 3e-7, two float
// ulps: far below bf16's 2^-9), 2^n put together from bits. std::exp / expf stay scalar in GCC without
// -ffast-math, and a scalar exp per element made the fused bf16 kernels slower than torch's composite ops.
// Below -87 the result is 0 (softmax's masked positions stay exactly 0); above 88 it is exp(88) ~ 1.65e38, never
// inf; NaN stays NaN.
#pragma once
#include <cstdint>

#include "kernels/bf16.h"

namespace bt::kernels {

// c ? a : b, as bit masks: GCC does not if-convert a float ternary in these loops (they stayed scalar).
inline float select(bool c, float a, float b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return float_from_bits((float_bits(a) & m) | (float_bits(b) & ~m));
}

inline float fast_exp(float x) {
  const bool underflows = x < -87.0f;  // a NaN compares false both ways and passes through
  x = select(x > 88.0f, 88.0f, x);
  x = select(underflows, -87.0f, x);
  // t's low mantissa bits hold n = round(x / ln2) (1.5 * 2^23 pins the exponent): no float->int conversion.
  const float shifter = 12582912.0f;
  const float t = x * 1.44269504f + shifter;
  const float n = t - shifter;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;  // ln2 = hi - lo, hi of 9 bits: n * hi exact
  float p = 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const uint32_t two_n = (float_bits(t) - float_bits(shifter) + 127u) << 23;  // 2^n, n in [-126, 127]
  return select(underflows, 0.0f, p * float_from_bits(two_n));
}

}  // namespace bt::kernels
