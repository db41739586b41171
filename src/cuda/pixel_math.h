// The per-pixel arithmetic shared by the CUDA kernels and their CPU reference, so both run the very same
// integer/float operations: Pillow's fixed-point tap sums with uint8 rounding, the normalisation lookup
// and float -> bf16 rounding (round to nearest even, NaN kept quiet).
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define BT_HD __host__ __device__ __forceinline__
#else
#define BT_HD inline
#endif

namespace bt::cuda {

inline constexpr int kFixedBits = 22;  // == media::kPrecisionBits (checked in resize_plan.cpp)

BT_HD uint8_t fixed_to_u8(int32_t acc) {
  const int32_t v = acc >> kFixedBits;
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

// One interleaved-RGB tap sum: `count` pixels starting at `px` (stride `step` bytes), weights `w`.
BT_HD void tap_sum_rgb(const uint8_t* px, int step, const int32_t* w, int count, uint8_t out[3]) {
  int32_t r = 1 << (kFixedBits - 1), g = r, b = r;
  for (int k = 0; k < count; ++k) {
    const uint8_t* p = px + static_cast<long>(k) * step;
    r += p[0] * w[k];
    g += p[1] * w[k];
    b += p[2] * w[k];
  }
  out[0] = fixed_to_u8(r);
  out[1] = fixed_to_u8(g);
  out[2] = fixed_to_u8(b);
}

BT_HD uint16_t float_to_bf16(float f) {
  uint32_t u;
#if defined(__CUDA_ARCH__)
  u = __float_as_uint(f);
#else
  std::memcpy(&u, &f, 4);
#endif
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float bf16_to_float(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace bt::cuda
