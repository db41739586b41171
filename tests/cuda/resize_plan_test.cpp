// Planning: torchvision's eval geometry, Pillow's tables for the kept outputs, and validation of
// untrusted sizes/offsets.
#include <gtest/gtest.h>

#include "common/error.h"
#include "cuda/resize_plan.h"
#include "media/resample_coeffs.h"

namespace bt::cuda {
namespace {

TEST(CudaResizePlan, EvalSpecFollowsTorchvision) {
  const SampleSpec s = eval_spec(740, 700, 288);  // short side = height
  EXPECT_EQ(s.y.out_full, 288);
  EXPECT_EQ(s.x.out_full, 304);  // int(288 * 740 / 700) = 304
  EXPECT_EQ(s.x.out_begin, 8);
  EXPECT_EQ(s.y.out_begin, 0);
  EXPECT_EQ(s.x.src_extent, 740);
  // round((577 - 288) / 2) = round(144.5) = 144 and round(145.5) = 146: Python rounds half to even.
  EXPECT_EQ(eval_spec(577, 288, 288).x.out_begin, 144);
  EXPECT_EQ(eval_spec(579, 288, 288).x.out_begin, 146);
  const SampleSpec t = eval_spec(300, 1000, 288);  // portrait
  EXPECT_EQ(t.x.out_full, 288);
  EXPECT_EQ(t.y.out_full, 960);
  EXPECT_EQ(t.y.out_begin, 336);
}

TEST(CudaResizePlan, TablesAreThePillowTablesOfTheKeptOutputs) {
  const SampleSpec s = eval_spec(740, 700, 288);
  const BatchPlan p = make_plan({s}, {0}, 740 * 700 * 3, 288, OutputType::kFloat32);
  ASSERT_EQ(p.samples.size(), 1u);
  const SamplePlan& sp = p.samples[0];
  const media::ResampleCoeffs cx = media::compute_resample_coeffs(740, 0, 740, 304);
  ASSERT_EQ(sp.x_taps, cx.taps);
  const int32_t* xb = p.coef.data() + sp.x_coef;
  for (int o = 0; o < 288; ++o) {
    EXPECT_EQ(xb[2 * o], cx.bounds[8 + o].first);
    EXPECT_EQ(xb[2 * o + 1], cx.bounds[8 + o].count);
    EXPECT_EQ(xb[2 * 288 + o * sp.x_taps], cx.fixed[(8 + o) * cx.taps]);
  }
  EXPECT_GE(sp.row0, 0);
  EXPECT_LE(sp.row0 + sp.rows, 700);
  EXPECT_EQ(p.scratch_bytes, static_cast<size_t>(sp.rows) * 288 * 3);
  EXPECT_EQ(p.output_bytes(), 3u * 288 * 288 * 4);
}

TEST(CudaResizePlan, CropRowsAreRestrictedToTheCrop) {
  const BatchPlan p = make_plan({crop_spec(100, 80, 30, 10, 20, 50, 16, true)}, {0}, 100 * 80 * 3, 16,
                                OutputType::kBFloat16);
  const SamplePlan& sp = p.samples[0];
  EXPECT_EQ(sp.row0, 30);
  EXPECT_EQ(sp.rows, 20);
  EXPECT_EQ(sp.flip, 1);
  const int32_t* xb = p.coef.data() + sp.x_coef;
  for (int o = 0; o < 16; ++o) {
    EXPECT_GE(xb[2 * o], 10);
    EXPECT_LE(xb[2 * o] + xb[2 * o + 1], 60);
  }
  EXPECT_EQ(p.output_bytes(), 3u * 16 * 16 * 2);
}

TEST(CudaResizePlan, RejectsBadInput) {
  const size_t bytes = 50 * 40 * 3;
  EXPECT_THROW(make_plan({eval_spec(50, 40, 16)}, {8}, bytes, 16, OutputType::kFloat32), Error);  // past end
  EXPECT_THROW(make_plan({eval_spec(50, 40, 16)}, {}, bytes, 16, OutputType::kFloat32), Error);   // no offset
  EXPECT_THROW(make_plan({crop_spec(50, 40, 30, 0, 20, 10, 16, false)}, {0}, bytes, 16, OutputType::kFloat32),
               Error);  // crop leaves the image
  EXPECT_THROW(make_plan({box_spec(50, 40, 10, 0, 5, 40, 16, false)}, {0}, bytes, 16, OutputType::kFloat32),
               Error);  // empty box
  EXPECT_THROW(make_plan({box_spec(50, 40, 0, 0, 50.5, 40, 16, false)}, {0}, bytes, 16, OutputType::kFloat32),
               Error);  // box past the edge
  SampleSpec s = eval_spec(50, 40, 16);
  s.x.out_begin = s.x.out_full - 15;  // fewer than image_size outputs left
  EXPECT_THROW(make_plan({s}, {0}, bytes, 16, OutputType::kFloat32), Error);
  SampleSpec z = eval_spec(50, 40, 16);
  z.width = 0;
  EXPECT_THROW(make_plan({z}, {0}, bytes, 16, OutputType::kFloat32), Error);
  EXPECT_THROW(make_plan({eval_spec(50, 40, 16)}, {0}, bytes, 0, OutputType::kFloat32), Error);
  const float bad_std[3] = {0.2f, 0.0f, 0.2f};
  EXPECT_THROW(make_plan({eval_spec(50, 40, 16)}, {0}, bytes, 16, OutputType::kFloat32, nullptr, bad_std), Error);
  EXPECT_NO_THROW(make_plan({eval_spec(50, 40, 16)}, {0}, bytes, 16, OutputType::kFloat32));
}

}  // namespace
}  // namespace bt::cuda
