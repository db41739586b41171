// Colour jitter in the kernel's CPU reference (the arithmetic the GPU runs, pixel by pixel with the contrast
// mean of integer sums) == the CPU transform's whole-image passes (media/color_jitter.h) on the same resized
// pixels; samples without jitter are untouched; bad factors are refused by the plan.
#include <gtest/gtest.h>

#include <cmath>

#include "batch_fixture.h"
#include "common/error.h"
#include "cuda/resize_ref.h"
#include "media/color_jitter.h"

namespace bt::cuda {
namespace {

TEST(CudaJitterRef, ReferenceEqualsTheCpuTransformsJitter) {
  for (int n : {16, 37}) {
    test::Batch b = test::mixed_batch(n, 12, 21 + n, false);
    test::add_jitter(b, 5);
    const BatchPlan plan = make_plan(b.specs, b.offsets, b.packed.size(), n, OutputType::kFloat32);
    ASSERT_TRUE(plan.jitter);
    const size_t plane = static_cast<size_t>(n) * n;
    std::vector<float> out(plan.output_bytes() / sizeof(float));
    reference_run(plan, b.packed.data(), out.data());
    for (size_t i = 0; i < b.images.size(); ++i) {
      test::Image want = test::expected(b.images[i], b.descs[i], n);
      media::apply_color_jitter(want.px.data(), plane, b.specs[i].jitter);
      std::vector<uint8_t> got(plane * 3);
      reference_sample_u8(plan, i, b.packed.data(), got.data());
      ASSERT_EQ(got, want.px) << "sample " << i << " size " << n;
      const std::vector<float> norm = test::normalize(want);
      for (size_t k = 0; k < norm.size(); ++k) ASSERT_EQ(out[i * 3 * plane + k], norm[k]) << "sample " << i;
    }
  }
}

TEST(CudaJitterRef, PlanRefusesBadFactorsAndFlagsJitterBatches) {
  test::Batch b = test::mixed_batch(8, 3, 4, false);
  EXPECT_FALSE(make_plan(b.specs, b.offsets, b.packed.size(), 8, OutputType::kFloat32).jitter);
  b.specs[1].jitter.saturation = 1.5f;
  EXPECT_TRUE(make_plan(b.specs, b.offsets, b.packed.size(), 8, OutputType::kFloat32).jitter);
  for (float bad : {-0.5f, NAN, 1e9f}) {
    b.specs[2].jitter.contrast = bad;
    EXPECT_THROW(make_plan(b.specs, b.offsets, b.packed.size(), 8, OutputType::kFloat32), Error) << bad;
  }
}

}  // namespace
}  // namespace bt::cuda
