// media/simd.h's dispatch follows ONEDNN_MAX_CPU_ISA (common/cpu_isa.h) as the model's kernels do; ctest runs this
// case, and the Pillow goldens, again under AVX2 and SSE41 (media.capped_*).
#include <gtest/gtest.h>

#include <string>

#include "common/cpu_isa.h"
#include "media/simd.h"

namespace bt::media {
namespace {

TEST(MediaSimd, TargetFollowsTheCpuCap) {
  const std::string target = simd_target();
  SCOPED_TRACE(target + " under " + describe_cpu(cpu_isa()));
  const bool avx512_target = target.rfind("AVX3", 0) == 0;
  if (cpu_isa().level != CpuLevel::kAvx512) {
    EXPECT_FALSE(avx512_target);
  }
  if (cpu_isa().level == CpuLevel::kBaseline) {
    EXPECT_NE(target, "AVX2");
  }
  // Uncapped, an AVX2 machine's loops run on AVX2 or better.
  if (cpu_isa().level == CpuLevel::kAvx2) {
    EXPECT_EQ(target, "AVX2");
  }
}

}  // namespace
}  // namespace bt::media
