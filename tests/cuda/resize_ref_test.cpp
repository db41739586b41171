// The CPU reference of the CUDA kernel against a plain Pillow/torchvision transcription (exact), against
// double-precision 2D resampling without intermediate rounding (close), and its edge cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "batch_fixture.h"
#include "cuda/pixel_math.h"
#include "cuda/resize_ref.h"

namespace bt::cuda {
namespace {

using test::Batch;
using test::Image;

void expect_matches_naive(const Batch& b, int n, OutputType type) {
  const BatchPlan plan = make_plan(b.specs, b.offsets, b.packed.size(), n, type);
  std::vector<uint8_t> out(plan.output_bytes());
  reference_run(plan, b.packed.data(), out.data());
  const size_t plane = static_cast<size_t>(n) * n;
  for (size_t i = 0; i < b.images.size(); ++i) {
    const Image want_u8 = test::expected(b.images[i], b.descs[i], n);
    std::vector<uint8_t> got_u8(plane * 3);
    reference_sample_u8(plan, i, b.packed.data(), got_u8.data());
    ASSERT_EQ(got_u8, want_u8.px) << "sample " << i << " (" << b.images[i].w << "x" << b.images[i].h << ", kind "
                                  << b.descs[i].kind << ")";
    const std::vector<float> want = test::normalize(want_u8);
    for (size_t k = 0; k < want.size(); ++k) {
      const size_t at = i * 3 * plane + k;
      if (type == OutputType::kFloat32)
        ASSERT_EQ(reinterpret_cast<const float*>(out.data())[at], want[k]) << "sample " << i << " value " << k;
      else
        ASSERT_EQ(reinterpret_cast<const uint16_t*>(out.data())[at], float_to_bf16(want[k])) << "sample " << i;
    }
  }
}

TEST(CudaResizeRef, MatchesPlainPillowTranscriptionFloat32) {
  expect_matches_naive(test::mixed_batch(16, 24, 1, false), 16, OutputType::kFloat32);
  expect_matches_naive(test::mixed_batch(23, 12, 2, false), 23, OutputType::kFloat32);
}

TEST(CudaResizeRef, MatchesPlainPillowTranscriptionBf16) {
  expect_matches_naive(test::mixed_batch(16, 12, 3, false), 16, OutputType::kBFloat16);
}

TEST(CudaResizeRef, MatchesOnBenchmarkSizedImages) {
  expect_matches_naive(test::mixed_batch(64, 3, 4, true), 64, OutputType::kFloat32);
}

// Without Pillow's uint8 rounding between the passes (and fixed-point weights) the result moves by ~1 level.
TEST(CudaResizeRef, CloseToDoublePrecisionResample) {
  const Image im = test::random_image(97, 61, 9);
  const int n = 20;
  const std::vector<SampleSpec> specs = {box_spec(im.w, im.h, 3.25, 2.5, 90.75, 58.0, n, false)};
  const BatchPlan plan = make_plan(specs, {0}, im.px.size(), n, OutputType::kFloat32);
  std::vector<uint8_t> got(static_cast<size_t>(n) * n * 3);
  reference_sample_u8(plan, 0, im.px.data(), got.data());
  const media::ResampleCoeffs cx = media::compute_resample_coeffs(im.w, 3.25, 90.75, n);
  const media::ResampleCoeffs cy = media::compute_resample_coeffs(im.h, 2.5, 58.0, n);
  // Horizontal pass in double, clamped like Pillow's clip8 but not rounded.
  std::vector<double> mid(static_cast<size_t>(im.h) * n * 3);
  for (int y = 0; y < im.h; ++y)
    for (int x = 0; x < n; ++x)
      for (int c = 0; c < 3; ++c) {
        double acc = 0;
        for (int i = 0; i < cx.bounds[x].count; ++i)
          acc += cx.weights[x * cx.taps + i] * im.at(cx.bounds[x].first + i, y, c);
        mid[(static_cast<size_t>(y) * n + x) * 3 + c] = std::clamp(acc, 0.0, 255.0);
      }
  int worst = 0;
  long sum = 0;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x)
      for (int c = 0; c < 3; ++c) {
        double acc = 0;
        for (int j = 0; j < cy.bounds[y].count; ++j)
          acc += cy.weights[y * cy.taps + j] * mid[(static_cast<size_t>(cy.bounds[y].first + j) * n + x) * 3 + c];
        const int want = static_cast<int>(std::lround(std::clamp(acc, 0.0, 255.0)));
        const int d = std::abs(want - got[(y * n + x) * 3 + c]);
        worst = std::max(worst, d);
        sum += d;
      }
  EXPECT_LT(static_cast<double>(sum) / (n * n * 3), 0.5);
  EXPECT_LE(worst, 2);
}

TEST(CudaResizeRef, SameSizeIsIdentityAndFlipMirrors) {
  const Image im = test::random_image(17, 17, 5);
  for (bool flip : {false, true}) {
    const BatchPlan plan = make_plan({crop_spec(17, 17, 0, 0, 17, 17, 17, flip)}, {0}, im.px.size(), 17,
                                     OutputType::kFloat32);
    std::vector<uint8_t> got(im.px.size());
    reference_sample_u8(plan, 0, im.px.data(), got.data());
    EXPECT_EQ(got, (flip ? test::hflip(im) : im).px);
  }
}

// A RandomResizedCrop sample only reads its crop, so the loader may upload just the crop's pixels
// (crop_spec over the cropped image) and get the same bytes: less to copy over PCIe.
TEST(CudaResizeRef, UploadingOnlyTheCropGivesTheSameResult) {
  const Image im = test::random_image(211, 157, 7);
  const int top = 23, left = 41, ch = 97, cw = 130, n = 48;
  const Image cropped = test::crop(im, left, top, cw, ch);
  const BatchPlan whole = make_plan({crop_spec(im.w, im.h, top, left, ch, cw, n, true)}, {0}, im.px.size(), n,
                                    OutputType::kBFloat16);
  const BatchPlan part = make_plan({crop_spec(cw, ch, 0, 0, ch, cw, n, true)}, {0}, cropped.px.size(), n,
                                   OutputType::kBFloat16);
  std::vector<uint8_t> a(whole.output_bytes()), b(part.output_bytes());
  reference_run(whole, im.px.data(), a.data());
  reference_run(part, cropped.px.data(), b.data());
  EXPECT_EQ(a, b);
}

TEST(CudaResizeRef, ConstantImageStaysConstant) {
  for (int level : {0, 1, 77, 254, 255}) {
    Image im{301, 203, std::vector<uint8_t>(301 * 203 * 3, static_cast<uint8_t>(level))};
    const BatchPlan plan = make_plan({eval_spec(301, 203, 31)}, {0}, im.px.size(), 31, OutputType::kFloat32);
    std::vector<uint8_t> got(31 * 31 * 3);
    reference_sample_u8(plan, 0, im.px.data(), got.data());
    for (uint8_t v : got) ASSERT_EQ(v, level);
  }
}

TEST(CudaPixelMath, Bf16RoundsToNearestEven) {
  auto bits = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return float_to_bf16(f);
  };
  EXPECT_EQ(bits(0x3f800000u), 0x3f80);  // 1.0
  EXPECT_EQ(bits(0x3f808000u), 0x3f80);  // tie, even stays
  EXPECT_EQ(bits(0x3f818000u), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(bits(0x3f808001u), 0x3f81);
  EXPECT_EQ(bits(0xbf7fffffu), 0xbf80);  // carries into the exponent
  EXPECT_EQ(bits(0x7f800000u), 0x7f80);  // inf
  EXPECT_NE(bits(0x7f800001u) & 0x7f, 0);  // NaN stays NaN
  EXPECT_FLOAT_EQ(bf16_to_float(0x3fc0), 1.5f);
}

}  // namespace
}  // namespace bt::cuda
