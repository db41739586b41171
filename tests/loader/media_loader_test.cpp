// The loader with the real media pipeline on small JPEGs made here with TurboJPEG: worker-count
// independence, equality with a direct media::transform_to_u8 call, a corrupt file's error message, and the
// spec's normalisation.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <set>

#include "common/error.h"
#include "loader/loader.h"
#include "media/augment.h"

namespace bt::loader {
namespace {

std::vector<uint8_t> make_jpeg(int w, int h, int seed) {
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        rgb[(static_cast<size_t>(y) * w + x) * 3 + c] = static_cast<uint8_t>((x * (c + 1) + y * 3 + seed * 40) & 255);
  tjhandle tj = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(tjCompress2(tj, rgb.data(), w, 0, h, TJPF_RGB, &out, &size, TJSAMP_420, 90, 0), 0);
  std::vector<uint8_t> bytes(out, out + size);
  tjFree(out);
  tjDestroy(tj);
  return bytes;
}

// Bytes of `jpeg` with 4 junk bytes before its DQT segment: libjpeg's "Corrupt JPEG data: 4 extraneous bytes before
// marker 0xdb" warning, decoded through as Pillow does.
std::vector<uint8_t> with_extraneous_bytes(std::vector<uint8_t> jpeg) {
  for (size_t i = 2; i + 1 < jpeg.size(); ++i)
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xDB) {
      jpeg.insert(jpeg.begin() + static_cast<std::ptrdiff_t>(i), 4, uint8_t{0x12});
      return jpeg;
    }
  ADD_FAILURE() << "no DQT";
  return jpeg;
}

// Rows i use image i % 5; image 3 is truncated (a bad sample), or with `warning` one that decodes with a warning.
class JpegDataset : public data::Dataset {
 public:
  explicit JpegDataset(size_t n, bool warning = false) {
    for (size_t i = 0; i < n; ++i) {
      keys_.push_back(std::string("j").append(std::to_string(i % 5)).append(".jpg"));  // no GCC 12 -Wrestrict
      captions_.push_back(std::string("c").append(std::to_string(i)));
    }
    for (int i = 0; i < 5; ++i) jpegs_.push_back(make_jpeg(60 + 13 * i, 50 + 7 * i, i));
    if (warning) jpegs_[3] = with_extraneous_bytes(jpegs_[3]);
    else jpegs_[3].resize(jpegs_[3].size() / 3);  // truncated: a bad sample
  }
  size_t size() const override { return keys_.size(); }
  const std::string& caption(size_t i) const override { return captions_[i]; }
  const std::string& image_key(size_t i) const override { return keys_[i]; }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override { bytes = jpegs_[i % 5]; }
  std::string describe(size_t i) const override { return "jpegs:" + std::to_string(i + 1) + " (" + keys_[i] + ")"; }
  const std::vector<uint8_t>& jpeg(size_t i) const { return jpegs_[i % 5]; }

 private:
  std::vector<std::string> keys_, captions_;
  std::vector<std::vector<uint8_t>> jpegs_;
};

LoaderOptions opts(int workers) {
  LoaderOptions o;
  o.num_workers = workers;
  o.batch_size = 4;
  o.transform.image_size = 32;
  o.output_u8 = true;
  o.on_bad_sample = data::OnBad::kSkip;
  o.decoded_cache_mb = 0;
  return o;
}

TEST(MediaLoader, RealDecodeIsIdenticalForAnyWorkerCountAndMatchesMedia) {
  auto ds = std::make_shared<JpegDataset>(30);
  for (auto mode : {media::TransformMode::kEval, media::TransformMode::kTrain}) {
    std::vector<uint8_t> ref;
    for (int w : {0, 1, 2, 4}) {
      auto o = opts(w);
      o.transform.mode = mode;
      Loader l(ds, o);
      l.start_epoch(0);
      std::vector<uint8_t> all;
      size_t checked = 0;
      while (auto b = l.next()) {
        all.insert(all.end(), b->pixels_u8.begin(), b->pixels_u8.end());
        for (int j = 0; j < b->size && w == 2; ++j, ++checked) {
          std::vector<uint8_t> direct(32 * 32 * 3);
          auto scratch = media::make_scratch();
          media::transform_to_u8(ds->jpeg(b->rows[j]), o.transform, sample_seed(o.sampler.seed, 0, b->rows[j]),
                                 direct.data(), *scratch);
          EXPECT_EQ(0, std::memcmp(direct.data(), b->pixels_u8.data() + j * direct.size(), direct.size()));
        }
      }
      EXPECT_EQ(l.stats().skipped, 6u) << "rows 3, 8, ... hold the truncated JPEG";
      if (w == 0) ref = all;
      else EXPECT_EQ(all, ref) << w << " workers";
    }
  }
}

// The augmentation presets and overrides (colour jitter included): the same batches for any worker count, two
// epochs apart from each other, each sample the media transform of its seed.
TEST(MediaLoader, AugmentationsAreIdenticalForAnyWorkerCount) {
  auto ds = std::make_shared<JpegDataset>(25);
  media::AugmentOptions custom;
  custom.preset = "finetune";
  custom.rrc_scale = std::array<double, 2>{0.3, 0.5};
  custom.hflip_p = 0.5;
  custom.color_jitter = std::array<double, 3>{0.8, 0.5, 0.9};
  media::AugmentOptions strong;
  strong.preset = "strong";
  for (const auto& aug : {strong, custom}) {
    std::vector<uint8_t> ref[2];
    for (int w : {0, 1, 3}) {
      auto o = opts(w);
      media::apply_augment(aug, o.transform);
      Loader l(ds, o);
      for (uint64_t epoch : {0u, 1u}) {
        l.start_epoch(epoch);
        std::vector<uint8_t> all;
        while (auto b = l.next()) {
          all.insert(all.end(), b->pixels_u8.begin(), b->pixels_u8.end());
          if (w != 3) continue;
          for (int j = 0; j < b->size; ++j) {
            std::vector<uint8_t> direct(32 * 32 * 3);
            auto scratch = media::make_scratch();
            media::transform_to_u8(ds->jpeg(b->rows[j]), o.transform,
                                   sample_seed(o.sampler.seed, epoch, b->rows[j]), direct.data(), *scratch);
            ASSERT_EQ(0, std::memcmp(direct.data(), b->pixels_u8.data() + j * direct.size(), direct.size()));
          }
        }
        if (w == 0) ref[epoch] = all;
        else EXPECT_EQ(all, ref[epoch]) << aug.preset << ", " << w << " workers, epoch " << epoch;
      }
    }
    EXPECT_NE(ref[0], ref[1]) << "epochs drew the same augmentations";
  }
}

TEST(MediaLoader, CorruptJpegErrorNamesTheRow) {
  auto ds = std::make_shared<JpegDataset>(10);
  auto o = opts(2);
  o.on_bad_sample = data::OnBad::kError;
  o.sampler.shuffle = false;
  Loader l(ds, o);
  l.start_epoch(0);
  try {
    while (l.next()) {
    }
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("jpegs:4 (j3.jpg): ", 0), 0u) << e.what();
  }
}

// A JPEG libjpeg warns about is no bad sample, even under on_bad_sample=error: it is decoded and counted (per
// batch and in the loader's stats, the run's report), the same for any worker count.
TEST(MediaLoader, ImagesDecodedWithWarningsAreCountedNeverRefused) {
  auto ds = std::make_shared<JpegDataset>(20, true);  // rows 3, 8, 13, 18
  for (int w : {0, 1, 3}) {
    auto o = opts(w);
    o.on_bad_sample = data::OnBad::kError;
    Loader l(ds, o);
    l.start_epoch(0);
    size_t samples = 0;
    while (auto b = l.next()) {
      size_t warned = 0;
      for (int j = 0; j < b->size; ++j) warned += b->rows[j] % 5 == 3;
      EXPECT_EQ(b->decoded_with_warnings, warned);
      samples += static_cast<size_t>(b->size);
    }
    EXPECT_EQ(samples, 20u);
    EXPECT_EQ(l.stats().decoded_with_warnings, 4u) << w << " workers";
  }
  auto clean = std::make_shared<JpegDataset>(20);
  Loader l(clean, opts(2));
  l.start_epoch(0);
  while (l.next()) {
  }
  EXPECT_EQ(l.stats().decoded_with_warnings, 0u) << "the truncated JPEG is a skipped sample, not a warning";
}

TEST(MediaLoader, CacheGivesTheSameCrops) {
  auto ds = std::make_shared<JpegDataset>(40);
  std::vector<std::vector<float>> out;
  for (size_t mb : {0, 8}) {
    auto o = opts(2);
    o.decoded_cache_mb = mb;
    Loader l(ds, o);
    l.start_epoch(1);
    std::vector<float> all;
    while (auto b = l.next()) all.insert(all.end(), b->pixels.begin(), b->pixels.end());
    out.push_back(all);
    if (mb) {
      EXPECT_GT(l.stats().cache_hits, 0u);
    }
  }
  EXPECT_EQ(out[0], out[1]);
}

// The spec's mean/std (a model's preprocessor_config.json) normalise every float, cached crops included; a std
// that is not > 0 is refused.
TEST(MediaLoader, TheSpecsMeanAndStdNormalise) {
  auto ds = std::make_shared<JpegDataset>(10);
  auto o = opts(2);
  o.decoded_cache_mb = 8;
  o.transform.mean = {0.25f, 0.5f, 0.75f};
  o.transform.std = {0.125f, 0.25f, 0.5f};
  Loader l(ds, o);
  const size_t plane = 32 * 32;
  for (int epoch = 0; epoch < 2; ++epoch) {  // the second epoch from the cache
    l.start_epoch(0);
    while (auto b = l.next())
      for (size_t i = 0; i < size_t(b->size); ++i)
        for (size_t p = 0; p < plane; ++p)
          for (size_t c = 0; c < 3; ++c)
            ASSERT_EQ(b->pixels[(i * 3 + c) * plane + p],
                      (float(b->pixels_u8[(i * plane + p) * 3 + c]) / 255.0f - o.transform.mean[c]) / o.transform.std[c]);
  }
  EXPECT_GT(l.stats().cache_hits, 0u);
  o.transform.std[1] = 0;
  EXPECT_THROW(Loader(ds, o), Error);
}

}  // namespace
}  // namespace bt::loader
