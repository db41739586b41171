// The loader's decode-only mode (GPU media pipeline input) against the normal CPU loader: the same rows in
// the same order, and the decoded images + geometry run through the kernel's CPU reference (cuda/resize_ref.h)
// give the CPU transform's uint8 crops and normalised floats, eval and train, inline and with 2 workers; and
// LoaderOptions::packed_allocator: batches packed in the caller's memory, alike, without steady-state allocations.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common/error.h"
#include "cuda/decoded_spec.h"
#include "cuda/resize_ref.h"
#include "loader/loader.h"
#include "media/augment.h"
#include "../common/counting_allocator.h"

namespace bt {
namespace {

std::vector<uint8_t> make_jpeg(int w, int h, int seed, bool gray) {
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        const double v = 128 + 90 * std::sin(0.07 * x * (c + 1) + seed) * std::cos(0.05 * y + c) + ((x ^ y) & 15);
        rgb[(static_cast<size_t>(y) * w + x) * 3 + c] = static_cast<uint8_t>(std::clamp(v, 0.0, 255.0));
      }
  tjhandle tj = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(tjCompress2(tj, rgb.data(), w, 0, h, TJPF_RGB, &out, &size, gray ? TJSAMP_GRAY : TJSAMP_420, 90, 0), 0);
  std::vector<uint8_t> bytes(out, out + size);
  tjFree(out);
  tjDestroy(tj);
  return bytes;
}

// Sizes that make the CPU transform pick several DCT scales at image_size 32 (full, 1/2, 1/4, 1/8 ...).
class JpegSet : public data::Dataset {
 public:
  explicit JpegSet(size_t n) {
    const int sizes[][2] = {{300, 220}, {140, 90}, {64, 48}, {41, 77}, {520, 260}, {33, 35}, {257, 129}};
    for (int i = 0; i < 7; ++i) jpegs_.push_back(make_jpeg(sizes[i][0], sizes[i][1], i, i == 3));
    for (size_t i = 0; i < n; ++i) {
      keys_.push_back("k" + std::to_string(i % 7));
      caps_.push_back("c" + std::to_string(i));
    }
  }
  size_t size() const override { return keys_.size(); }
  const std::string& caption(size_t i) const override { return caps_[i]; }
  const std::string& image_key(size_t i) const override { return keys_[i]; }
  void read_image(size_t i, std::vector<uint8_t>& b) const override { b = jpegs_[i % 7]; }
  std::string describe(size_t i) const override { return "set:" + std::to_string(i); }

 private:
  std::vector<std::vector<uint8_t>> jpegs_;
  std::vector<std::string> keys_, caps_;
};

constexpr int kSize = 32;

loader::LoaderOptions options(int workers, media::TransformMode mode, bool decoded) {
  loader::LoaderOptions o;
  o.num_workers = workers;
  o.batch_size = 5;
  o.transform.image_size = kSize;
  o.transform.mode = mode;
  o.output_u8 = true;
  o.output_decoded = decoded;
  o.decoded_cache_mb = 0;
  o.sampler.shuffle = true;
  o.sampler.seed = 7;
  return o;
}

// A preset of media/augment.h (strong: crop + flip + colour jitter).
loader::LoaderOptions options(int workers, const std::string& preset, bool decoded) {
  loader::LoaderOptions o = options(workers, media::TransformMode::kEval, decoded);
  media::AugmentOptions a;
  a.preset = preset;
  media::apply_augment(a, o.transform);
  return o;
}

struct Compare {
  size_t bytes = 0, exact = 0, scaled = 0, cropped = 0, jittered = 0;
  int max_u8 = 0;
  float max_f = 0;
};

void compare_epoch(int workers, const std::string& preset, Compare& c) {
  auto ds = std::make_shared<JpegSet>(23);
  loader::Loader cpu(ds, options(workers, preset, false));
  loader::Loader dec(ds, options(workers, preset, true));
  const bool train = preset != "eval";
  for (uint64_t epoch : {0u, 1u}) {
    cpu.start_epoch(epoch);
    dec.start_epoch(epoch);
    std::vector<cuda::SampleSpec> specs;
    std::vector<uint64_t> offsets;
    for (;;) {
      auto a = cpu.next();
      auto b = dec.next();
      ASSERT_EQ(!a, !b);
      if (!a) break;
      ASSERT_EQ(a->rows, b->rows);
      ASSERT_EQ(a->captions, b->captions);
      EXPECT_TRUE(b->pixels.empty() && b->pixels_u8.empty());
      ASSERT_EQ(b->decoded.samples.size(), static_cast<size_t>(b->size));
      for (const auto& s : b->decoded.samples) {
        EXPECT_EQ(s.offset % 64, 0u);
        c.scaled += s.plan.scale_num < 8;
        c.cropped += s.cropped;
        EXPECT_EQ(s.plan.train, train);
        c.jittered += media::jitter_any(s.plan.jitter);
      }
      cuda::specs_of(b->decoded.samples, specs, offsets);
      const auto plan = cuda::make_plan(specs, offsets, b->decoded.bytes, kSize, cuda::OutputType::kFloat32);
      const size_t px = static_cast<size_t>(kSize) * kSize * 3;
      std::vector<uint8_t> u8(px);
      for (int j = 0; j < b->size; ++j) {
        cuda::reference_sample_u8(plan, j, b->decoded.packed.data(), u8.data());
        const uint8_t* want = a->pixels_u8.data() + j * px;
        for (size_t k = 0; k < px; ++k) {
          const int d = std::abs(int(u8[k]) - int(want[k]));
          c.max_u8 = std::max(c.max_u8, d);
          c.exact += d == 0;
        }
        c.bytes += px;
      }
      std::vector<float> f(plan.output_bytes() / sizeof(float));
      cuda::reference_run(plan, b->decoded.packed.data(), f.data());
      ASSERT_EQ(f.size(), a->pixels.size());
      for (size_t k = 0; k < f.size(); ++k) c.max_f = std::max(c.max_f, std::abs(f[k] - a->pixels[k]));
    }
  }
}

class DecodedLoader : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(DecodedLoader, ReferenceKernelOnDecodedBatchEqualsCpuLoader) {
  const auto [workers, preset] = GetParam();
  Compare c;
  compare_epoch(workers, preset, c);
  ASSERT_GT(c.bytes, 0u);
  EXPECT_LE(c.max_u8, 1) << "uint8 crops differ by more than one level";
  EXPECT_EQ(c.exact, c.bytes) << c.bytes - c.exact << " of " << c.bytes << " bytes off by one";
  EXPECT_LT(c.max_f, 1.0f / 255 / 0.26f + 1e-5f);  // within one level after normalisation
  EXPECT_GT(c.scaled, 0u) << "no sample used DCT-domain downscaling: the test lost its point";
  if (preset != "eval") {
    EXPECT_GT(c.cropped, 0u) << "no crop-only upload was exercised";
  }
  EXPECT_EQ(c.jittered > 0, preset == "strong") << c.jittered << " samples with colour jitter";
}

INSTANTIATE_TEST_SUITE_P(Modes, DecodedLoader,
                         ::testing::Combine(::testing::Values(0, 2), ::testing::Values("eval", "train", "strong")),
                         [](const auto& info) {
                           return std::get<1>(info.param) + "_" + std::to_string(std::get<0>(info.param));
                         });

TEST(DecodedLoaderPack, CropOnlyUploadIsSmallerThanWholeImages) {
  auto ds = std::make_shared<JpegSet>(14);
  auto o = options(0, media::TransformMode::kTrain, true);
  loader::Loader l(ds, o);
  auto b = l.next();
  ASSERT_TRUE(b);
  size_t whole = 0;
  for (const auto& s : b->decoded.samples) {
    whole += static_cast<size_t>(s.plan.dec_w) * s.plan.dec_h * 3;
    EXPECT_EQ(static_cast<size_t>(s.width) * s.height * 3 + s.offset <= b->decoded.bytes, true);
    if (s.cropped) {
      EXPECT_TRUE(s.width == s.plan.crop.width && s.height == s.plan.crop.height);
    }
  }
  EXPECT_LE(b->decoded.bytes, whole + 64 * b->decoded.samples.size());
}

// Same samples, geometry and pixels (padding between samples is uninitialised, so only the pixels compare).
void expect_same_packing(const loader::DecodedBatch& a, const loader::DecodedBatch& b) {
  ASSERT_EQ(a.bytes, b.bytes);
  ASSERT_EQ(a.samples.size(), b.samples.size());
  for (size_t i = 0; i < a.samples.size(); ++i) {
    const loader::DecodedSample &x = a.samples[i], &y = b.samples[i];
    ASSERT_TRUE(x.offset == y.offset && x.width == y.width && x.height == y.height && x.cropped == y.cropped) << i;
    const size_t n = static_cast<size_t>(x.width) * x.height * 3;
    ASSERT_EQ(std::memcmp(a.packed.data() + x.offset, b.packed.data() + y.offset, n), 0) << "sample " << i;
  }
}

TEST(DecodedLoaderPack, PackedAllocatorHoldsEveryBatchWithTheDefaultsPixels) {
  auto ds = std::make_shared<JpegSet>(23);
  test::CountingAllocator counting;
  size_t batches = 0;
  {
    auto o = options(2, media::TransformMode::kTrain, true);
    loader::Loader plain(ds, o);
    o.packed_allocator = counting.get();
    loader::Loader pinned(ds, o);
    for (uint64_t epoch : {0u, 1u}) {
      plain.start_epoch(epoch);
      pinned.start_epoch(epoch);
      for (;;) {
        auto a = plain.next();
        auto b = pinned.next();
        ASSERT_EQ(!a, !b);
        if (!a) break;
        ASSERT_TRUE(counting.owns(b->decoded.packed.data(), b->decoded.bytes))
            << "epoch " << epoch << " batch " << b->index << " is not packed in the allocator's memory";
        EXPECT_FALSE(counting.owns(a->decoded.packed.data(), 1));
        expect_same_packing(a->decoded, b->decoded);
        ++batches;
      }
    }
    EXPECT_GT(counting.allocations(), 0u);
  }
  EXPECT_EQ(batches, 10u);
  EXPECT_EQ(counting.releases(), counting.allocations()) << "the loader leaked packed buffers";
}

TEST(DecodedLoaderPack, PackedAllocatorIsNotCalledInTheSteadyState) {
  auto ds = std::make_shared<JpegSet>(40);
  test::CountingAllocator counting;
  auto o = options(0, media::TransformMode::kTrain, true);  // inline: one batch recycled, a fixed sequence
  o.packed_allocator = counting.get();
  loader::Loader l(ds, o);
  size_t warm = 0, batches = 0;
  for (uint64_t epoch : {0u, 1u, 2u}) {
    l.start_epoch(epoch);
    while (auto b = l.next()) {
      ++batches;
      if (epoch == 1 && b->index == 1) warm = counting.allocations();
    }
  }
  EXPECT_EQ(batches, 24u);
  EXPECT_GE(warm, 1u) << "the packed buffers did not come from the allocator";
  EXPECT_EQ(counting.allocations(), warm) << "steady-state batches allocated";
}

TEST(DecodedLoaderPack, BadSampleIsNamedAsInTheCpuPath) {
  class Bad : public JpegSet {
   public:
    Bad() : JpegSet(10) {}
    void read_image(size_t i, std::vector<uint8_t>& b) const override {
      JpegSet::read_image(i, b);
      if (i == 3) b.resize(20);
    }
  };
  auto o = options(2, media::TransformMode::kEval, true);
  o.sampler.shuffle = false;
  loader::Loader l(std::make_shared<Bad>(), o);
  try {
    while (l.next()) {
    }
    FAIL() << "a truncated JPEG went through";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("set:3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bt
