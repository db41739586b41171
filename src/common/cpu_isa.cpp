#include "common/cpu_isa.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace bt {
namespace {

struct Hardware {
  CpuLevel level = CpuLevel::kBaseline;
  bool bf16 = false;
  std::string bf16_feature;
};

#if defined(__x86_64__) || defined(__i386__)
bool bit(unsigned reg, int b) { return (reg >> b) & 1u; }

// XCR0: the register state the OS saves on context switches (a feature whose state it does not save is unusable).
uint64_t xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

Hardware read_hardware() {
  Hardware h;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return h;
  const bool fma = bit(c, 12), movbe = bit(c, 22), osxsave = bit(c, 27), avx = bit(c, 28), f16c = bit(c, 29);
  if (!osxsave || !avx) return h;
  const uint64_t xcr = xcr0();
  if ((xcr & 0x6) != 0x6) return h;  // SSE and AVX state
  unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0;
  if (!__get_cpuid_count(7, 0, &a7, &b7, &c7, &d7)) return h;
  unsigned ae = 0, be = 0, ce = 0, de = 0;
  const bool lzcnt = __get_cpuid(0x80000001, &ae, &be, &ce, &de) && bit(ce, 5);
  const bool v3 = fma && movbe && f16c && lzcnt && bit(b7, 3) /*bmi1*/ && bit(b7, 5) /*avx2*/ && bit(b7, 8) /*bmi2*/;
  if (!v3) return h;
  h.level = CpuLevel::kAvx2;
  const bool avx512_state = (xcr & 0xe0) == 0xe0;  // opmask, ZMM upper halves, ZMM16-31
  const bool v4 = avx512_state && bit(b7, 16) /*f*/ && bit(b7, 17) /*dq*/ && bit(b7, 28) /*cd*/ && bit(b7, 30) /*bw*/ &&
                  bit(b7, 31) /*vl*/;
  if (!v4) return h;
  h.level = CpuLevel::kAvx512;
  unsigned a71 = 0, b71 = 0, c71 = 0, d71 = 0;
  const bool amx_state = (xcr & 0x60000) == 0x60000;  // XTILECFG, XTILEDATA
  if (bit(d7, 22) && amx_state) {
    h.bf16 = true, h.bf16_feature = "amx_bf16";
  } else if (__get_cpuid_count(7, 1, &a71, &b71, &c71, &d71) && bit(a71, 5)) {
    h.bf16 = true, h.bf16_feature = "avx512_bf16";
  }
  return h;
}
#else
Hardware read_hardware() { return {}; }
#endif

const Hardware& hardware() {
  static const Hardware h = read_hardware();
  return h;
}

struct Cap {
  CpuLevel level;
  bool bf16;
};

// oneDNN's ISA names (case-insensitive, as oneDNN reads them) as the most each allows of ours.
bool cap_of(const char* value, Cap& cap) {
  struct Entry {
    const char* name;
    Cap cap;
  };
  static const Entry kEntries[] = {
      {"sse41", {CpuLevel::kBaseline, false}},       {"avx", {CpuLevel::kBaseline, false}},
      {"avx2", {CpuLevel::kAvx2, false}},            {"avx2_vnni", {CpuLevel::kAvx2, false}},
      {"avx2_vnni_2", {CpuLevel::kAvx2, false}},     {"avx512_core", {CpuLevel::kAvx512, false}},
      {"avx512_core_vnni", {CpuLevel::kAvx512, false}}, {"avx512_core_bf16", {CpuLevel::kAvx512, true}},
      {"avx512_core_fp16", {CpuLevel::kAvx512, true}}, {"avx512_core_amx", {CpuLevel::kAvx512, true}},
      {"avx512_core_amx_fp16", {CpuLevel::kAvx512, true}}, {"all", {CpuLevel::kAvx512, true}},
  };
  for (const Entry& e : kEntries)
    if (strcasecmp(value, e.name) == 0) {
      cap = e.cap;
      return true;
    }
  return false;
}

}  // namespace

CpuIsa cpu_isa_capped_by(const char* cap_value) {
  const Hardware& h = hardware();
  CpuIsa isa;
  isa.hardware_level = isa.level = h.level;
  isa.hardware_bf16 = isa.bf16_native = h.bf16;
  isa.bf16_feature = h.bf16_feature;
  Cap cap{};
  if (cap_value && *cap_value) {
    isa.cap = cap_value;
    if (cap_of(cap_value, cap)) {
      if (static_cast<int>(cap.level) < static_cast<int>(isa.level)) isa.level = cap.level;
      isa.bf16_native = isa.bf16_native && cap.bf16;
      // amx_bf16 is AVX512_CORE_AMX's: under AVX512_CORE_BF16 only the AVX-512 instructions remain.
      if (isa.bf16_native && isa.bf16_feature == "amx_bf16" && strncasecmp(cap_value, "avx512_core_amx", 15) != 0 &&
          strcasecmp(cap_value, "all") != 0)
        isa.bf16_feature = "avx512_bf16";
    }
  }
  if (!isa.bf16_native) isa.bf16_feature.clear();
  return isa;
}

const CpuIsa& cpu_isa() {
  static const CpuIsa isa = cpu_isa_capped_by(std::getenv("ONEDNN_MAX_CPU_ISA"));
  return isa;
}

const char* cpu_level_name(CpuLevel level) {
  switch (level) {
    case CpuLevel::kAvx512: return "AVX-512";
    case CpuLevel::kAvx2: return "AVX2";
    default: return "baseline x86-64";
  }
}

std::string describe_cpu(const CpuIsa& isa) {
  std::string s = cpu_level_name(isa.level);
  s += isa.bf16_native ? ", bf16 native (" + isa.bf16_feature + ")" : ", bf16 emulated";
  if (isa.capped()) s += ", capped by ONEDNN_MAX_CPU_ISA=" + isa.cap;
  return s;
}

}  // namespace bt
