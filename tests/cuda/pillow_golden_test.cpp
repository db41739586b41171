// The kernel's CPU reference against real Pillow/torchvision output (the media module's golden files:
// tests/media/golden, made by Pillow 9 + torchvision) and against the CPU loader's own resize
// (media::resize_rgb8) on random batches: both must be bit-identical, so the GPU path (equal to the
// reference, see gpu_parity_test) matches the CPU path exactly.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "batch_fixture.h"
#include "cuda/resize_ref.h"
#include "media/decode.h"
#include "media/plan.h"
#include "media/resize.h"
#include "media/transform.h"

namespace bt::cuda {
namespace {

std::string golden(const std::string& name) { return std::string(BT_MEDIA_GOLDEN_DIR) + "/" + name; }

media::ImageU8 load(const std::string& name) {
  std::ifstream f(golden(name), std::ios::binary);
  EXPECT_TRUE(f.good()) << golden(name);
  const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  media::ImageU8 im;
  media::decode_rgb8(bytes, uint64_t{89478485}, im, 8);
  return im;
}

std::vector<std::vector<std::string>> manifest(const std::string& kind) {
  std::ifstream f(golden("manifest.txt"));
  std::vector<std::vector<std::string>> out;
  for (std::string line; std::getline(f, line);) {
    std::istringstream is(line);
    std::vector<std::string> v{std::istream_iterator<std::string>(is), std::istream_iterator<std::string>()};
    if (!v.empty() && v[0] == kind) out.push_back(v);
  }
  return out;
}

std::vector<uint8_t> run_one(const SampleSpec& s, const media::ImageU8& src, int n) {
  const BatchPlan plan = make_plan({s}, {0}, src.stride() * src.height, n, OutputType::kFloat32);
  std::vector<uint8_t> out(static_cast<size_t>(n) * n * 3);
  reference_sample_u8(plan, 0, src.pixels.data(), out.data());
  return out;
}

TEST(CudaPillowGolden, EvalTransformMatchesPillowExactly) {
  const auto cases = manifest("eval");
  ASSERT_GE(cases.size(), 5u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c[1] + " @" + c[2]);
    const int n = std::stoi(c[2]);
    const media::ImageU8 src = load(c[1]), want = load(c[3]);
    ASSERT_EQ(want.width, n);
    const std::vector<uint8_t> got = run_one(eval_spec(src.width, src.height, n), src, n);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.pixels.data()));
  }
}

TEST(CudaPillowGolden, ResizedCropMatchesPillowExactly) {
  const auto cases = manifest("crop");
  ASSERT_GE(cases.size(), 3u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c[7]);
    const int n = std::stoi(c[2]), top = std::stoi(c[3]), left = std::stoi(c[4]), h = std::stoi(c[5]),
              w = std::stoi(c[6]);
    const media::ImageU8 src = load(c[1]), want = load(c[7]);
    const std::vector<uint8_t> got = run_one(crop_spec(src.width, src.height, top, left, h, w, n, false), src, n);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.pixels.data()));
  }
}

std::vector<uint8_t> read_file(const std::string& name) {
  std::ifstream f(golden(name), std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The loader's recipe for the GPU path: plan (media/plan.h), decode at the plan's DCT scale, describe the
// sample with spec_of(plan), resample. It must give transform_to_u8's bytes.
TEST(CudaPillowGolden, MatchesTheCpuTransformWithDctScaling) {
  auto scratch = media::make_scratch();
  int scaled = 0;
  for (const char* name : {"cartoon_736x699.jpg", "cartoon_1203x800.jpg", "cartoon_799x1203.jpg",
                           "cartoon_300x301.jpg", "cartoon_64x1000.jpg"})
    for (int n : {96, 160, 294})
      for (int mode = 0; mode < 2; ++mode)
        for (uint64_t seed : {uint64_t{1}, uint64_t{77}}) {
          SCOPED_TRACE(std::string(name) + " @" + std::to_string(n) + (mode ? " train seed " + std::to_string(seed) : " eval"));
          const std::vector<uint8_t> bytes = read_file(name);
          media::TransformSpec spec;
          spec.image_size = n;
          spec.mode = mode ? media::TransformMode::kTrain : media::TransformMode::kEval;
          std::vector<uint8_t> want(size_t(n) * n * 3), got(want.size());
          media::transform_to_u8(bytes, spec, seed, want.data(), *scratch);

          const media::TransformPlan p = media::plan_transform(media::probe_image(bytes, spec.max_image_pixels),
                                                               spec, seed);
          const int k = p.scale_num;
          scaled += k < 8;
          media::ImageU8 dec;
          media::decode_rgb8(bytes, spec.max_image_pixels, dec, k);
          const SampleSpec s = spec_of(p);
          const BatchPlan plan = make_plan({s}, {0}, dec.stride() * dec.height, n, OutputType::kFloat32);
          reference_sample_u8(plan, 0, dec.pixels.data(), got.data());
          EXPECT_EQ(got, want) << "DCT scale " << k << "/8";
        }
  EXPECT_GT(scaled, 10);  // the DCT-scaled geometry really was exercised
}

TEST(CudaPillowGolden, MatchesTheCpuLoaderResize) {
  const int n = 29;
  const test::Batch b = test::mixed_batch(n, 30, 21, false);
  const BatchPlan plan = make_plan(b.specs, b.offsets, b.packed.size(), n, OutputType::kFloat32);
  media::ResizeScratch rs;
  for (size_t i = 0; i < b.images.size(); ++i) {
    const test::Image& im = b.images[i];
    const test::Desc& d = b.descs[i];
    const SampleSpec& s = b.specs[i];
    std::vector<uint8_t> want(static_cast<size_t>(n) * n * 3), got(want.size());
    const size_t stride = static_cast<size_t>(im.w) * 3;
    if (d.kind == test::Desc::kEval)
      media::resize_rgb8(im.px.data(), im.w, im.h, stride, media::Box{0, 0, double(im.w), double(im.h)}, s.x.out_full,
                         s.y.out_full, media::Window{s.x.out_begin, s.y.out_begin, n, n}, want.data(), n * 3, rs);
    else if (d.kind == test::Desc::kCrop)
      media::resize_rgb8(im.px.data() + d.top * stride + d.left * 3, d.cw, d.ch, stride,
                         media::Box{0, 0, double(d.cw), double(d.ch)}, n, n, media::Window{0, 0, n, n}, want.data(),
                         n * 3, rs, d.flip);
    else
      media::resize_rgb8(im.px.data(), im.w, im.h, stride, media::Box{d.x0, d.y0, d.x1, d.y1}, n, n,
                         media::Window{0, 0, n, n}, want.data(), n * 3, rs, d.flip);
    reference_sample_u8(plan, i, b.packed.data(), got.data());
    EXPECT_EQ(got, want) << "sample " << i << " kind " << d.kind << " " << im.w << "x" << im.h;
  }
}

}  // namespace
}  // namespace bt::cuda
