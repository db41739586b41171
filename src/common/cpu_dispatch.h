// Kernels compiled once per vector level and picked at run time by common/cpu_isa.h (so ONEDNN_MAX_CPU_ISA caps
// them as it caps oneDNN; GCC's target_clones pick by the CPU alone, at load time, and cannot be capped).
//
//   BT_CPU_KERNEL(scale_rows, (float* x, int64_t n, float s), (x, n, s)) {
//     for (int64_t i = 0; i < n; ++i) x[i] *= s;
//   }
//
// defines `void scale_rows(float*, int64_t, float)`: the body is an always-inline function compiled into three
// wrappers, for AVX-512 (x86-64-v4: F/BW/CD/DQ/VL with AVX2, FMA, BMI2), AVX2 (x86-64-v3) and baseline x86-64, and
// the first call picks one for the process. Only the body and what it inlines take the level's instructions, never
// a shared inline function emitted out of line (which the linker could hand to every caller). Kernels return void.
#pragma once
#include "common/cpu_isa.h"

#if defined(__x86_64__) && !defined(BT_NO_CPU_CLONES)
#define BT_TARGET_AVX2 __attribute__((target("avx,avx2,fma,bmi,bmi2,f16c,lzcnt,movbe")))
#define BT_TARGET_AVX512 \
  __attribute__((target("avx,avx2,fma,bmi,bmi2,f16c,lzcnt,movbe,avx512f,avx512bw,avx512cd,avx512dq,avx512vl")))
#define BT_CPU_KERNEL(name, params, args)                                                                       \
  [[gnu::always_inline]] inline void name##_body params;                                                       \
  BT_TARGET_AVX512 void name##_avx512 params { name##_body args; }                                              \
  BT_TARGET_AVX2 void name##_avx2 params { name##_body args; }                                                  \
  void name##_baseline params { name##_body args; }                                                             \
  void name params {                                                                                            \
    static const auto chosen = ::bt::pick_for_cpu(&name##_avx512, &name##_avx2, &name##_baseline);             \
    chosen args;                                                                                                \
  }                                                                                                             \
  [[gnu::always_inline]] inline void name##_body params
#else
#define BT_CPU_KERNEL(name, params, args) void name params
#endif
