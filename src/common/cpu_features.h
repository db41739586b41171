// What the CPU offers that changes which precision trains fastest. native_bf16() is true when the CPU has bf16
// dot products in hardware (x86: AVX512_BF16 or AMX-BF16, from CPUID), where libtorch's oneDNN runs bf16
// matmuls several times faster than fp32; elsewhere bf16 is emulated and usually slower.
#pragma once
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace bt {

struct CpuBf16 {
  bool native = false;
  std::string feature;  // "avx512_bf16" / "amx_bf16" when native
};

inline CpuBf16 cpu_bf16() {
  CpuBf16 r;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  // CPUID leaf 7: sub-leaf 0 EDX bit 22 = AMX-BF16; sub-leaf 1 EAX bit 5 = AVX512_BF16. The AVX-512 state must
  // also be enabled by the OS, which __builtin_cpu_supports("avx512f") checks.
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 22 & 1u)) r = {true, "amx_bf16"};
  else if (__get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 5 & 1u) && __builtin_cpu_supports("avx512f"))
    r = {true, "avx512_bf16"};
#endif
  return r;
}

}  // namespace bt
