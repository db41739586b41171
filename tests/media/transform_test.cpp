// Train transform (RandomResizedCrop + flip): seeded determinism, crops within bounds, flip; normalisation.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "common/error.h"
#include "media/random_crop.h"
#include "media/resize.h"
#include "media/transform.h"
#include "media_test_util.h"

namespace bt::media {
namespace {
using namespace testing;

std::vector<uint8_t> run(const std::vector<uint8_t>& bytes, const TransformSpec& spec, uint64_t seed) {
  auto scratch = make_scratch();
  std::vector<uint8_t> out(size_t(spec.image_size) * spec.image_size * 3);
  transform_to_u8(bytes, spec, seed, out.data(), *scratch);
  return out;
}

TEST(MediaTransform, CropParamsWithinBoundsAndSeeded) {
  std::set<std::tuple<int, int, int, int>> distinct;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    for (auto [w, h] : {std::pair{736, 699}, std::pair{64, 1000}, std::pair{17, 9}}) {
      SampleRng a(seed), b(seed);
      const CropRect c = random_resized_crop_params(w, h, 0.08, 1.0, 3.0 / 4, 4.0 / 3, a);
      const CropRect d = random_resized_crop_params(w, h, 0.08, 1.0, 3.0 / 4, 4.0 / 3, b);
      ASSERT_EQ(std::tie(c.top, c.left, c.height, c.width), std::tie(d.top, d.left, d.height, d.width));
      ASSERT_GE(c.top, 0);
      ASSERT_GE(c.left, 0);
      ASSERT_GE(c.width, 1);
      ASSERT_GE(c.height, 1);
      ASSERT_LE(c.top + c.height, h);
      ASSERT_LE(c.left + c.width, w);
      if (w == 736) {
        distinct.insert({c.top, c.left, c.height, c.width});
        const double area = double(c.width) * c.height / (736.0 * 699);
        ASSERT_GE(area, 0.07);  // rounding of w, h may shave a little off 0.08
        const double ratio = double(c.width) / c.height;
        ASSERT_GE(ratio, 0.74);
        ASSERT_LE(ratio, 1.34);
      }
    }
  }
  EXPECT_GT(distinct.size(), 1900u);
}

TEST(MediaTransform, FallbackIsCenterCropOfClampedRatio) {
  // A 1000x10 strip: no attempt fits a ratio in [3/4, 4/3] at any scale, so torchvision's fallback runs.
  SampleRng rng(3);
  const CropRect c = random_resized_crop_params(1000, 10, 0.08, 1.0, 3.0 / 4, 4.0 / 3, rng);
  EXPECT_EQ(c.height, 10);
  EXPECT_EQ(c.width, 13);  // round(10 * 4/3)
  EXPECT_EQ(c.left, (1000 - 13) / 2);
  EXPECT_EQ(c.top, 0);
}

TEST(MediaTransform, TrainIsDeterministicBySeed) {
  const auto bytes = read_bytes(golden_path("cartoon_736x699.jpg"));
  TransformSpec spec;
  spec.mode = TransformMode::kTrain;
  for (bool dct : {false, true}) {
    spec.dct_scaling = dct;
    EXPECT_EQ(run(bytes, spec, 42), run(bytes, spec, 42));
    EXPECT_NE(run(bytes, spec, 42), run(bytes, spec, 43));
  }
}

TEST(MediaTransform, TrainMatchesCropThenResizeAndFlip) {
  const auto bytes = read_bytes(golden_path("cartoon_736x699.jpg"));
  const ImageU8 src = decode_file("cartoon_736x699.jpg");
  TransformSpec spec;
  spec.mode = TransformMode::kTrain;
  spec.dct_scaling = false;
  const int S = spec.image_size;
  int flips = 0;
  ResizeScratch rs;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    SampleRng rng(seed);
    const CropRect c = random_resized_crop_params(736, 699, spec.scale_min, spec.scale_max, spec.ratio_min,
                                                  spec.ratio_max, rng);
    const bool flip = rng.uniform() < spec.hflip_p;
    flips += flip;
    std::vector<uint8_t> want(size_t(S) * S * 3);
    resize_rgb8(src.row(c.top) + c.left * 3, c.width, c.height, src.stride(), Box{0, 0, double(c.width), double(c.height)},
                S, S, Window{0, 0, S, S}, want.data(), S * 3, rs);
    const auto got = run(bytes, spec, seed);
    for (int y = 0; y < S; y += 7)
      for (int x = 0; x < S; x += 5)
        for (int ch = 0; ch < 3; ++ch)
          ASSERT_EQ(got[(y * S + x) * 3 + ch], want[(y * S + (flip ? S - 1 - x : x)) * 3 + ch])
              << "seed " << seed << " flip " << flip;
  }
  EXPECT_GT(flips, 0);
  EXPECT_LT(flips, 12);
}

TEST(MediaTransform, FlipProbabilityExtremes) {
  const auto bytes = read_bytes(golden_path("cartoon_300x301.jpg"));
  TransformSpec spec;
  spec.mode = TransformMode::kTrain;
  spec.image_size = 64;
  spec.scale_min = spec.scale_max = 1.0;
  spec.ratio_min = spec.ratio_max = 300.0 / 301;
  spec.hflip_p = 0;
  const auto a = run(bytes, spec, 5);
  spec.hflip_p = 1;
  const auto b = run(bytes, spec, 5);
  ASSERT_NE(a, b);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x)
      for (int c = 0; c < 3; ++c) ASSERT_EQ(a[(y * 64 + x) * 3 + c], b[(y * 64 + 63 - x) * 3 + c]);
}

TEST(MediaTransform, NormalizeMatchesTorchvisionFormula) {
  const int w = 37, h = 5;  // odd size: exercises the vector tail
  std::vector<uint8_t> hwc(size_t(w) * h * 3);
  for (size_t i = 0; i < hwc.size(); ++i) hwc[i] = uint8_t(i * 7 + 3);
  std::vector<float> chw(hwc.size());
  normalize_hwc_to_chw(hwc.data(), w, h, chw.data());
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < w * h; ++i) {
      const float want = (float(hwc[i * 3 + c]) / 255.0f - kClipMean[c]) / kClipStd[c];
      ASSERT_EQ(chw[c * w * h + i], want) << c << " " << i;  // bit-exact, float32 like torch
    }
}

TEST(MediaTransform, EvalOutputAnyImageSize) {
  const auto bytes = read_bytes(golden_path("cartoon_17x9.png"));
  TransformSpec spec;
  spec.image_size = 5;
  const auto out = run(bytes, spec, 0);
  EXPECT_EQ(out.size(), 75u);
  spec.image_size = 0;
  EXPECT_THROW(run(bytes, spec, 0), bt::Error);
}

}  // namespace
}  // namespace bt::media
