// One media plan for three consumers (issue 13): for the same (image header, transform spec, sample seed) the
// CPU transform, the loader's decode-only path and the CUDA kernels' setup follow the same plan, on the golden
// Pillow images (JPEG, so DCT scaling is exercised, and PNG) in eval and train mode.
//  - The plan equals the geometry the code computed before the plan existed (those formulas are kept here).
//  - decode_for_device reports exactly that plan and packs the pixels it says.
//  - cuda::spec_of(plan) resampled by the kernel's CPU reference gives transform_to_u8's bytes, and so does
//    media::resize_rgb8 driven by the plan's regions: the CPU transform follows the plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cuda/decoded_spec.h"
#include "cuda/resize_ref.h"
#include "loader/decode_only.h"
#include "media/plan.h"
#include "media/resize.h"

namespace bt {
namespace {

std::vector<uint8_t> read_golden(const std::string& name) {
  std::ifstream f(std::string(BT_MEDIA_GOLDEN_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(f.good()) << name;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The pre-plan geometry (media/transform.cpp, loader/decode_only.cpp, cuda/resize_plan.cpp *_spec_dct).
media::TransformPlan legacy_plan(const media::ImageInfo& info, const media::TransformSpec& spec, uint64_t seed) {
  const int W = info.width, H = info.height, S = spec.image_size;
  media::TransformPlan p;
  p.format = info.format, p.orig_w = W, p.orig_h = H, p.image_size = S;
  p.train = spec.mode == media::TransformMode::kTrain;
  p.crop = media::CropRect{0, 0, H, W};
  if (p.train) {
    media::SampleRng rng(seed);
    p.crop = media::random_resized_crop_params(W, H, spec.scale_min, spec.scale_max, spec.ratio_min,
                                               spec.ratio_max, rng);
    p.flip = rng.uniform() < spec.hflip_p;
  }
  int k = 8;
  if (info.format == media::ImageFormat::kJpeg && spec.dct_scaling)
    for (int j = 7; j >= 1; --j) {
      const double sx = double(media::jpeg_scaled(W, j)) / W, sy = double(media::jpeg_scaled(H, j)) / H;
      if (p.crop.width * sx >= S && p.crop.height * sy >= S)
        k = j;
      else
        break;
    }
  p.scale_num = k;
  p.dec_w = media::jpeg_scaled(W, k), p.dec_h = media::jpeg_scaled(H, k);
  const double s = k / 8.0;
  if (!p.train) {
    const bool w_short = W <= H;
    const int new_l = static_cast<int>(double(int64_t(S) * (w_short ? H : W)) / (w_short ? W : H));
    const int new_w = w_short ? S : new_l, new_h = w_short ? new_l : S;
    p.x = {0, p.dec_w, 0.0, std::min<double>(W * s, p.dec_w), new_w, int(std::nearbyint((new_w - S) / 2.0))};
    p.y = {0, p.dec_h, 0.0, std::min<double>(H * s, p.dec_h), new_h, int(std::nearbyint((new_h - S) / 2.0))};
  } else if (k == 8) {
    p.x = {p.crop.left, p.crop.width, 0.0, double(p.crop.width), S, 0};
    p.y = {p.crop.top, p.crop.height, 0.0, double(p.crop.height), S, 0};
  } else {
    const media::CropRect& c = p.crop;
    p.x = {0, p.dec_w, c.left * s, std::min<double>((c.left + c.width) * s, p.dec_w), S, 0};
    p.y = {0, p.dec_h, c.top * s, std::min<double>((c.top + c.height) * s, p.dec_h), S, 0};
  }
  return p;
}

void expect_same(const media::PlanAxis& a, const media::PlanAxis& b, const char* axis) {
  EXPECT_EQ(a.src_begin, b.src_begin) << axis;
  EXPECT_EQ(a.src_extent, b.src_extent) << axis;
  EXPECT_EQ(a.box0, b.box0) << axis;
  EXPECT_EQ(a.box1, b.box1) << axis;
  EXPECT_EQ(a.out_full, b.out_full) << axis;
  EXPECT_EQ(a.out_begin, b.out_begin) << axis;
}

void expect_same(const media::TransformPlan& a, const media::TransformPlan& b) {
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.orig_w, b.orig_w);
  EXPECT_EQ(a.orig_h, b.orig_h);
  EXPECT_EQ(a.scale_num, b.scale_num);
  EXPECT_EQ(a.dec_w, b.dec_w);
  EXPECT_EQ(a.dec_h, b.dec_h);
  EXPECT_EQ(a.image_size, b.image_size);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.crop.top, b.crop.top);
  EXPECT_EQ(a.crop.left, b.crop.left);
  EXPECT_EQ(a.crop.height, b.crop.height);
  EXPECT_EQ(a.crop.width, b.crop.width);
  EXPECT_EQ(a.flip, b.flip);
  expect_same(a.x, b.x, "x");
  expect_same(a.y, b.y, "y");
}

TEST(TransformPlan, CpuTransformDecodeOnlyAndCudaSetupFollowOnePlan) {
  auto scratch = media::make_scratch();
  int scaled = 0, cropped = 0, flipped = 0;
  for (const char* name : {"cartoon_736x699.jpg", "cartoon_1203x800.jpg", "cartoon_799x1203.jpg",
                           "cartoon_300x301.jpg", "cartoon_64x1000.jpg", "cartoon_17x9.png", "cartoon_288x288.png"})
    for (int n : {32, 96, 160, 294})
      for (int mode = 0; mode < 2; ++mode)
        for (uint64_t seed : {uint64_t{1}, uint64_t{77}}) {
          SCOPED_TRACE(std::string(name) + " @" + std::to_string(n) + (mode ? " train seed " + std::to_string(seed) : " eval"));
          const std::vector<uint8_t> bytes = read_golden(name);
          media::TransformSpec spec;
          spec.image_size = n;
          spec.mode = mode ? media::TransformMode::kTrain : media::TransformMode::kEval;
          const media::ImageInfo info = media::probe_image(bytes, spec.max_image_pixels);
          const media::TransformPlan plan = media::plan_transform(info, spec, seed);
          expect_same(plan, legacy_plan(info, spec, seed));
          scaled += plan.scale_num < 8;
          flipped += plan.flip;

          // Decode-only: the same plan, and the pixels it says.
          media::ImageU8 img;
          loader::DecodedSample m;
          AlignedBuffer<uint8_t> packed;
          loader::decode_for_device(bytes, spec, seed, false, img, m, packed, nullptr);
          expect_same(m.plan, plan);
          cropped += m.cropped;

          // CPU transform == CUDA setup's spec over the decode-only pixels == resize driven by the plan.
          std::vector<uint8_t> want(size_t(n) * n * 3), got(want.size()), resized(want.size());
          media::transform_to_u8(bytes, spec, seed, want.data(), *scratch);
          std::vector<cuda::SampleSpec> specs;
          std::vector<uint64_t> offsets;
          m.offset = 0;
          cuda::specs_of(std::vector<loader::DecodedSample>{m}, specs, offsets);
          const cuda::BatchPlan bp = cuda::make_plan(specs, offsets, packed.size(), n, cuda::OutputType::kFloat32);
          cuda::reference_sample_u8(bp, 0, packed.data(), got.data());
          EXPECT_EQ(got, want);
          media::ResizeScratch rs;
          const uint8_t* origin = img.row(plan.y.src_begin) + size_t(plan.x.src_begin) * 3;
          media::resize_rgb8(origin, plan.x.src_extent, plan.y.src_extent, img.stride(),
                             media::Box{plan.x.box0, plan.y.box0, plan.x.box1, plan.y.box1}, plan.x.out_full,
                             plan.y.out_full, media::Window{plan.x.out_begin, plan.y.out_begin, n, n}, resized.data(),
                             size_t(n) * 3, rs, plan.flip);
          EXPECT_EQ(resized, want);
        }
  // Every branch of the plan was exercised.
  EXPECT_GT(scaled, 10);
  EXPECT_GT(cropped, 5);
  EXPECT_GT(flipped, 3);
}

}  // namespace
}  // namespace bt
