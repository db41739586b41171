// What this CPU can run, decided once per process and capped by one switch. Every instruction-set-specific path
// reads it here: the vector level of bridgetune's own kernels (common/cpu_dispatch.h's clones, Highway's media
// loops), whether bf16 arithmetic is native (the bf16 hint, bench's labels, the bf16 GEMM's path) and, where the
// cap lowers what the CPU has, libtorch's oneDNN use (kernels/gemm/gemm.cpp).
// The switch is oneDNN's own, ONEDNN_MAX_CPU_ISA, so one variable caps oneDNN's kernels and ours alike:
//   SSE41, AVX        baseline x86-64 loops, bf16 emulated
//   AVX2, AVX2_VNNI   x86-64-v3 (AVX2, FMA, BMI2), bf16 emulated
//   AVX512_CORE[_VNNI] x86-64-v4 (AVX-512 F/BW/CD/DQ/VL), bf16 emulated
//   AVX512_CORE_BF16 and up, ALL, unset: what the CPU has
// A cap never raises a level the CPU lacks; an unknown value caps nothing (as oneDNN ignores it).
#pragma once
#include <string>

namespace bt {

enum class CpuLevel { kBaseline = 0, kAvx2 = 1, kAvx512 = 2 };

struct CpuIsa {
  CpuLevel level = CpuLevel::kBaseline;
  bool bf16_native = false;     // bf16 dot products in hardware (AVX512_BF16 or AMX-BF16), after the cap
  std::string bf16_feature;     // "avx512_bf16" / "amx_bf16" when native
  CpuLevel hardware_level = CpuLevel::kBaseline;  // before the cap
  bool hardware_bf16 = false;
  std::string cap;              // ONEDNN_MAX_CPU_ISA as given ("" when unset)

  bool capped() const { return level != hardware_level || bf16_native != hardware_bf16; }
};

// This process's answer: the CPU read once, capped by ONEDNN_MAX_CPU_ISA as it was at the first call.
const CpuIsa& cpu_isa();
// The same for a given cap value (null: none) on this CPU; tests check the mapping with it.
CpuIsa cpu_isa_capped_by(const char* cap);

// "AVX-512", "AVX2", "baseline x86-64"
const char* cpu_level_name(CpuLevel level);
// One line for logs: "AVX-512, bf16 native (avx512_bf16)" plus ", capped by ONEDNN_MAX_CPU_ISA=AVX2" when capped.
std::string describe_cpu(const CpuIsa& isa);

// Picks the clone of a kernel for this process's level (common/cpu_dispatch.h).
template <typename Fn>
Fn pick_for_cpu(Fn avx512, Fn avx2, Fn baseline) {
  switch (cpu_isa().level) {
    case CpuLevel::kAvx512: return avx512;
    case CpuLevel::kAvx2: return avx2;
    default: return baseline;
  }
}

}  // namespace bt
