// Train augmentations: colour jitter against torchvision's closed form (tensor functional on uint8, float32),
// the whole-image CPU passes against the per-pixel form the CUDA kernel runs, the factor draws, the presets and
// their overrides (ranges respected, `train` unchanged), and the parse errors of the flags' values.
// Compiled with -ffp-contract=off (CMakeLists.txt): the expectations below round each product like torch.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <tuple>

#include "common/error.h"
#include "media/augment.h"
#include "media/color_jitter.h"
#include "media/plan.h"
#include "media_test_util.h"

namespace bt::media {
namespace {
using testing::golden_path;
using testing::read_bytes;

// torchvision's ops spelled out: float32 products and sum, clamp, truncating uint8 cast.
uint8_t tv_cast(float v) { return static_cast<uint8_t>(std::min(std::max(v, 0.0f), 255.0f)); }
uint8_t tv_blend(uint8_t a, float b, float f) {
  const float rest = static_cast<float>(1.0 - double(f));
  const float fa = f * float(a), rb = rest * b;
  return tv_cast(fa + rb);
}
uint8_t tv_gray(const uint8_t* p) {
  const float r = 0.2989f * float(p[0]), g = 0.587f * float(p[1]), b = 0.114f * float(p[2]);
  const float rg = r + g;
  return static_cast<uint8_t>(rg + b);
}

std::vector<uint8_t> random_pixels(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> px(n * 3);
  for (auto& v : px) v = static_cast<uint8_t>(rng() % 256);
  px[0] = px[1] = px[2] = 255;  // white: torchvision's gray of it is 254
  px[3] = px[4] = px[5] = 0;
  return px;
}

TEST(MediaJitter, GrayIsTorchvisionsTruncatedFormula) {
  const uint8_t white[3] = {255, 255, 255}, px[3] = {200, 100, 50};
  EXPECT_EQ(jitter_gray(255, 255, 255), 254);  // 0.2989 + 0.587 + 0.114 = 0.9999
  EXPECT_EQ(tv_gray(white), 254);
  EXPECT_EQ(jitter_gray(200, 100, 50), 124);  // 59.78 + 58.7 + 5.7 = 124.18
  EXPECT_EQ(tv_gray(px), 124);
}

TEST(MediaJitter, EachStepIsItsClosedForm) {
  const size_t n = 13 * 7;
  const auto src = random_pixels(n, 1);
  for (float f : {0.0f, 0.37f, 0.6f, 1.25f, 1.4f, 3.0f}) {
    auto b = src, c = src, s = src;
    apply_color_jitter(b.data(), n, JitterFactors{f, 1, 1});
    apply_color_jitter(c.data(), n, JitterFactors{1, f, 1});
    apply_color_jitter(s.data(), n, JitterFactors{1, 1, f});
    uint64_t gray_sum = 0;
    for (size_t p = 0; p < n; ++p) gray_sum += tv_gray(&src[p * 3]);
    const float mean = static_cast<float>(double(gray_sum) / n);
    for (size_t p = 0; p < n; ++p)
      for (int k = 0; k < 3; ++k) {
        const size_t i = p * 3 + k;
        ASSERT_EQ(b[i], tv_cast(f * float(src[i]))) << "brightness " << f << " at " << i;
        ASSERT_EQ(c[i], tv_blend(src[i], mean, f)) << "contrast " << f << " at " << i;
        ASSERT_EQ(s[i], tv_blend(src[i], float(tv_gray(&src[p * 3])), f)) << "saturation " << f << " at " << i;
      }
  }
  // By hand: (200, 100, 50) brightened by 1.5 is (255, 150, 75); saturation 0 is its gray (124) everywhere.
  uint8_t px[3] = {200, 100, 50};
  apply_color_jitter(px, 1, JitterFactors{1.5f, 1, 1});
  EXPECT_EQ(std::vector<int>(px, px + 3), (std::vector<int>{255, 150, 75}));
  uint8_t q[3] = {200, 100, 50};
  apply_color_jitter(q, 1, JitterFactors{1, 1, 0});
  EXPECT_EQ(std::vector<int>(q, q + 3), (std::vector<int>{124, 124, 124}));
}

TEST(MediaJitter, StepsRunInOrderAndContrastUsesTheBrightenedMean) {
  const size_t n = 40;
  const auto src = random_pixels(n, 2);
  const JitterFactors f{1.3f, 0.7f, 1.6f};
  auto got = src;
  apply_color_jitter(got.data(), n, f);
  std::vector<uint8_t> want(src.size());
  uint64_t gray_sum = 0;
  for (size_t i = 0; i < src.size(); ++i) want[i] = tv_cast(f.brightness * float(src[i]));
  for (size_t p = 0; p < n; ++p) gray_sum += tv_gray(&want[p * 3]);
  const float mean = static_cast<float>(double(gray_sum) / n);
  for (auto& v : want) v = tv_blend(v, mean, f.contrast);
  for (size_t p = 0; p < n; ++p) {
    const float g = tv_gray(&want[p * 3]);
    for (int k = 0; k < 3; ++k) want[p * 3 + k] = tv_blend(want[p * 3 + k], g, f.saturation);
  }
  EXPECT_EQ(got, want);
}

// The CPU's whole-image passes == the per-pixel form the CUDA kernel runs (mean of jitter_mean_term).
TEST(MediaJitter, WholeImagePassesEqualThePerPixelForm) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> factor(0.0f, 2.0f);
  for (int trial = 0; trial < 40; ++trial) {
    const size_t n = 1 + rng() % 500;
    const auto src = random_pixels(n, trial);
    JitterFactors f{factor(rng), factor(rng), factor(rng)};
    if (trial % 4 == 1) f.brightness = 1;
    if (trial % 4 == 2) f.contrast = 1;
    auto cpu = src;
    apply_color_jitter(cpu.data(), n, f);
    auto px = src;
    uint64_t sum = 0;
    for (size_t p = 0; p < n; ++p) sum += jitter_mean_term(f, &px[p * 3]);
    for (size_t p = 0; p < n; ++p) jitter_pixel(f, jitter_mean(sum, n), &px[p * 3]);
    ASSERT_EQ(cpu, px) << "trial " << trial;
  }
}

TEST(MediaJitter, DrawsWithinTheRangeFromTheSeed) {
  std::set<float> seen;
  for (uint64_t seed = 0; seed < 500; ++seed) {
    SampleRng a(seed), b(seed);
    const JitterFactors f = draw_color_jitter({0.4, 1.5, 0}, a);
    const JitterFactors g = draw_color_jitter({0.4, 1.5, 0}, b);
    ASSERT_EQ(f.brightness, g.brightness);
    ASSERT_EQ(f.contrast, g.contrast);
    ASSERT_GE(f.brightness, 0.6f);
    ASSERT_LE(f.brightness, 1.4f);
    ASSERT_GE(f.contrast, 0.0f);  // max(0, 1 - 1.5)
    ASSERT_LE(f.contrast, 2.5f);
    ASSERT_EQ(f.saturation, 1.0f);  // strength 0 draws nothing
    seen.insert(f.brightness);
  }
  EXPECT_GT(seen.size(), 490u);
  SampleRng rng(9);
  const JitterFactors none = draw_color_jitter({0, 0, 0}, rng);
  EXPECT_FALSE(jitter_any(none));
  EXPECT_EQ(rng.next(), SampleRng(9).next()) << "no strength set: nothing drawn";
}

TransformSpec preset(const std::string& name, AugmentOptions a = {}) {
  a.preset = name;
  TransformSpec spec;
  apply_augment(a, spec);
  return spec;
}

TEST(MediaAugment, TrainPresetIsTodaysTrainTransform) {
  const TransformSpec def;
  const TransformSpec t = preset("train");
  EXPECT_EQ(t.mode, TransformMode::kTrain);
  EXPECT_EQ(t.scale_min, def.scale_min);
  EXPECT_EQ(t.scale_max, def.scale_max);
  EXPECT_EQ(t.ratio_min, def.ratio_min);
  EXPECT_EQ(t.ratio_max, def.ratio_max);
  EXPECT_EQ(t.hflip_p, def.hflip_p);
  EXPECT_EQ(t.color_jitter, def.color_jitter);
  EXPECT_EQ(preset("eval").mode, TransformMode::kEval);
  const TransformSpec s = preset("strong");
  EXPECT_EQ(s.color_jitter, (std::array<double, 3>{0.4, 0.4, 0.4}));
  EXPECT_EQ(preset("finetune").scale_min, 0.9);
}

TEST(MediaAugment, OverridesWinAndRangesAreRespected) {
  AugmentOptions a;
  a.rrc_scale = std::array<double, 2>{0.5, 0.6};
  a.rrc_ratio = std::array<double, 2>{2.0, 2.0};
  a.hflip_p = 1.0;
  const TransformSpec spec = preset("finetune", a);
  ImageInfo info;
  info.format = ImageFormat::kJpeg;
  info.width = 1000, info.height = 800;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const TransformPlan p = plan_transform(info, spec, seed);
    const double area = double(p.crop.width) * p.crop.height / (1000.0 * 800);
    ASSERT_GE(area, 0.49);  // w and h are rounded
    ASSERT_LE(area, 0.61);
    ASSERT_NEAR(double(p.crop.width) / p.crop.height, 2.0, 0.01);
    ASSERT_TRUE(p.flip);
    ASSERT_FALSE(jitter_any(p.jitter));
  }
  // finetune's own range, and jitter draws leave the crop and flip of a seed alone.
  const TransformSpec ft = preset("finetune"), strong = preset("strong"), train = preset("train");
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const TransformPlan p = plan_transform(info, ft, seed);
    ASSERT_GE(double(p.crop.width) * p.crop.height / (1000.0 * 800), 0.89);
    ASSERT_FALSE(p.flip);
    const TransformPlan s = plan_transform(info, strong, seed), t = plan_transform(info, train, seed);
    ASSERT_EQ(std::tie(s.crop.top, s.crop.left, s.crop.width, s.crop.height, s.flip),
              std::tie(t.crop.top, t.crop.left, t.crop.width, t.crop.height, t.flip));
    ASSERT_TRUE(jitter_any(s.jitter));
  }
}

TEST(MediaAugment, JitteredTransformIsTheTrainCropJittered) {
  const auto bytes = read_bytes(golden_path("cartoon_736x699.jpg"));
  auto scratch = make_scratch();
  TransformSpec strong = preset("strong"), train = preset("train");
  strong.image_size = train.image_size = 48;
  const size_t n = 48 * 48;
  const ImageInfo info = probe_image(bytes, strong.max_image_pixels);
  for (uint64_t seed = 0; seed < 6; ++seed) {
    std::vector<uint8_t> got(n * 3), want(n * 3);
    transform_to_u8(bytes, strong, seed, got.data(), *scratch);
    transform_to_u8(bytes, train, seed, want.data(), *scratch);
    apply_color_jitter(want.data(), n, plan_transform(info, strong, seed).jitter);
    ASSERT_EQ(got, want) << "seed " << seed;
  }
}

void expect_error(const std::function<void()>& f, const std::string& starts) {
  try {
    f();
    ADD_FAILURE() << "no error, expected one starting '" << starts << "'";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(starts, 0), 0u) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(MediaAugment, BadValuesFailNamingTheFlag) {
  EXPECT_EQ(parse_pair("0.25,1", "--rrc_scale"), (std::array<double, 2>{0.25, 1}));
  EXPECT_EQ(parse_triple("0.4,0,1e-1", "--color_jitter"), (std::array<double, 3>{0.4, 0, 0.1}));
  for (const char* bad : {"0.5", "0.5,", ",1", "a,b", "0.1,0.2,0.3", "0.1 ,0.2", "nan,1"})
    expect_error([&] { parse_pair(bad, "--rrc_scale"); }, "--rrc_scale: expected a,b");
  expect_error([] { parse_triple("0.4,0.4", "--color_jitter"); }, "--color_jitter: expected a,b,c");
  expect_error([] { check_rrc_scale({0.6, 0.5}, "--rrc_scale"); }, "--rrc_scale: ");
  expect_error([] { check_rrc_scale({0, 1}, "--rrc_scale"); }, "--rrc_scale: ");
  expect_error([] { check_rrc_scale({0.5, 1.01}, "--rrc_scale"); }, "--rrc_scale: ");
  expect_error([] { check_rrc_ratio({0, 1}, "--rrc_ratio"); }, "--rrc_ratio: ");
  expect_error([] { check_rrc_ratio({2, 1}, "--rrc_ratio"); }, "--rrc_ratio: ");
  expect_error([] { check_hflip_p(1.5, "--hflip_p"); }, "--hflip_p: ");
  expect_error([] { check_color_jitter({0.4, -0.1, 0}, "--color_jitter"); }, "--color_jitter: ");
  expect_error([] { preset("random"); }, "--train_transform must be eval, train, finetune or strong (got 'random')");
  AugmentOptions a;
  a.color_jitter = std::array<double, 3>{0.4, 0.4, 0.4};
  expect_error([&] { preset("eval", a); }, "--color_jitter: the eval transform draws nothing");
  AugmentOptions py;
  py.preset = "nope";
  TransformSpec spec;
  expect_error([&] { apply_augment(py, spec, "transform", ""); }, "transform must be eval, train");
}

}  // namespace
}  // namespace bt::media
