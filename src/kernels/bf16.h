// float -> bfloat16 in loops that must vectorise (the CPU dropout and bf16 GEMM kernels): round to nearest even,
// every NaN to 0x7FC0 -- c10::detail::round_to_nearest_even bit for bit (tests/kernels/dropout_test.cpp checks every
// bf16 value) -- written with masks: GCC if-converts neither c10's NaN branch nor a ternary there, and the scalar
// loop ran at 1/9 of the vectorised one.
#pragma once
#include <ATen/core/TensorBase.h>
#include <c10/util/BFloat16.h>

#include <cstdint>
#include <cstring>

// Each loop over bf16 bits is a BT_CPU_KERNEL (common/cpu_dispatch.h): compiled for AVX-512 (F/BW/CD/DQ/VL with
// FMA), AVX2 (with FMA) and baseline, picked at run time by common/cpu_isa.h, so ONEDNN_MAX_CPU_ISA caps it. A clone
// for AVX-512F alone left out BW/VL and FMA, and its bf16 loops ran 2.6x slower (fast_exp's polynomial, 16-bit
// packing).
#include "common/cpu_dispatch.h"

namespace bt::kernels {

inline uint32_t float_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

inline float float_from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t bf16_bits_from_float_bits(uint32_t bits) {
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t nan = 0u - static_cast<uint32_t>((bits & 0x7fffffffu) > 0x7f800000u);
  return static_cast<uint16_t>((rounded & ~nan) | (0x7fc0u & nan));
}

inline uint16_t bf16_bits(float f) { return bf16_bits_from_float_bits(float_bits(f)); }

inline float float_from_bf16_bits(uint16_t bits) { return float_from_bits(static_cast<uint32_t>(bits) << 16); }

// A contiguous bf16 tensor's data as the bits these loops read and write.
inline uint16_t* bf16_bits_of(const at::TensorBase& t) {
  return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>());
}

}  // namespace bt::kernels
