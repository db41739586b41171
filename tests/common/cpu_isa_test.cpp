// common/cpu_isa.h and common/cpu_dispatch.h: what ONEDNN_MAX_CPU_ISA's values allow, that a cap never raises what
// the CPU has, that this process follows the variable it was started with (ctest runs these cases again under
// AVX2 and SSE41: common.capped_*), and that every kernel clone this CPU can run computes what the baseline one does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "common/cpu_dispatch.h"
#include "common/cpu_isa.h"

namespace bt {
namespace {

int rank(CpuLevel l) { return static_cast<int>(l); }

TEST(CpuIsa, CapsLowerTheLevelAndBf16AsOneDnnNamesThem) {
  const CpuIsa none = cpu_isa_capped_by(nullptr);
  EXPECT_FALSE(none.capped());
  EXPECT_EQ(none.level, none.hardware_level);
  struct Case {
    const char* cap;
    CpuLevel most;
    bool bf16_allowed;
  };
  for (const Case& c : {Case{"SSE41", CpuLevel::kBaseline, false}, Case{"avx", CpuLevel::kBaseline, false},
                        Case{"AVX2", CpuLevel::kAvx2, false}, Case{"avx2", CpuLevel::kAvx2, false},
                        Case{"AVX512_CORE", CpuLevel::kAvx512, false},
                        Case{"AVX512_CORE_BF16", CpuLevel::kAvx512, true}, Case{"ALL", CpuLevel::kAvx512, true}}) {
    const CpuIsa isa = cpu_isa_capped_by(c.cap);
    EXPECT_EQ(rank(isa.level), std::min(rank(c.most), rank(none.hardware_level))) << c.cap;
    EXPECT_EQ(isa.bf16_native, c.bf16_allowed && none.hardware_bf16) << c.cap;
    EXPECT_EQ(isa.bf16_feature.empty(), !isa.bf16_native) << c.cap;
    EXPECT_EQ(isa.hardware_level, none.hardware_level) << c.cap;
    if (isa.capped()) {
      EXPECT_NE(describe_cpu(isa).find(std::string("ONEDNN_MAX_CPU_ISA=") + c.cap), std::string::npos);
    }
  }
  const CpuIsa unknown = cpu_isa_capped_by("PENTIUM_PRO");  // oneDNN ignores a name it does not know; so do we
  EXPECT_EQ(unknown.level, none.level);
  EXPECT_EQ(unknown.bf16_native, none.bf16_native);
}

TEST(CpuIsa, NativeBf16ImpliesAvx512) {
  const CpuIsa isa = cpu_isa_capped_by(nullptr);
  if (isa.hardware_bf16) {
    EXPECT_EQ(isa.hardware_level, CpuLevel::kAvx512);
  }
  EXPECT_EQ(describe_cpu(isa).find("bf16 native") != std::string::npos, isa.bf16_native);
}

TEST(CpuIsa, ThisProcessFollowsTheVariable) {
  const CpuIsa expected = cpu_isa_capped_by(std::getenv("ONEDNN_MAX_CPU_ISA"));
  EXPECT_EQ(cpu_isa().level, expected.level);
  EXPECT_EQ(cpu_isa().bf16_native, expected.bf16_native);
  EXPECT_EQ(pick_for_cpu(2, 1, 0), rank(cpu_isa().level));
}

// A loop each clone vectorises with its own instructions; its values are exact in float (halves of small
// integers, floored, plus small integers), so every clone must give them bit for bit.
BT_CPU_KERNEL(scaled_sums, (const float* in, float* out, int64_t n, float scale), (in, out, n, scale)) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::floor(in[i] * scale) + in[n - 1 - i];
}

TEST(CpuDispatch, EveryCloneThisCpuRunsAgreesWithTheBaseline) {
  const int64_t n = 1003;
  std::vector<float> in(n), want(n), got(n);
  for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>((i * 37) % 101) - 50.0f;
  for (int64_t i = 0; i < n; ++i) want[i] = std::floor(in[i] * 0.5f) + in[n - 1 - i];
  scaled_sums(in.data(), got.data(), n, 0.5f);  // the dispatched one
  EXPECT_EQ(got, want);
#if defined(__x86_64__) && !defined(BT_NO_CPU_CLONES)
  using Kernel = void (*)(const float*, float*, int64_t, float);
  std::vector<Kernel> runnable{&scaled_sums_baseline};
  if (rank(cpu_isa().hardware_level) >= rank(CpuLevel::kAvx2)) runnable.push_back(&scaled_sums_avx2);
  if (cpu_isa().hardware_level == CpuLevel::kAvx512) runnable.push_back(&scaled_sums_avx512);
  for (Kernel k : runnable) {
    std::fill(got.begin(), got.end(), 0.0f);
    k(in.data(), got.data(), n, 0.5f);
    EXPECT_EQ(got, want);
  }
#endif
}

}  // namespace
}  // namespace bt
