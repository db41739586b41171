// The loader's encoded mode (LoaderOptions::ship_device_jpegs, --media_decode gpu): which JPEGs go to the device
// decoder (loader::device_decodable_jpeg), what a shipped sample carries, and the whole device path on the CPU:
// cuda::layout_of + a CPU decode of the shipped JPEGs into that layout + the kernel's CPU reference equal the CPU
// loader -- without DCT scaling for shipped JPEGs (the device decoder has none), with it for the rest.
// Also: the decoded cache on the formats nvJPEG cannot take (they share this file's dataset).
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "cuda/decoded_spec.h"
#include "cuda/resize_ref.h"
#include "loader/decode_only.h"
#include "loader/loader.h"
#include "media/decode.h"

namespace bt {
namespace {

std::vector<uint8_t> jpeg(int w, int h, int seed, int subsamp, int flags = 0, int pixel_format = TJPF_RGB) {
  const int ch = pixel_format == TJPF_CMYK ? 4 : 3;
  std::vector<uint8_t> px(static_cast<size_t>(w) * h * ch);
  for (size_t i = 0; i < px.size(); ++i)
    px[i] = static_cast<uint8_t>(128 + 100 * std::sin(0.05 * static_cast<double>(i % (w * ch)) + seed) *
                                           std::cos(0.07 * static_cast<double>(i / (w * ch))));
  tjhandle tj = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(tjCompress2(tj, px.data(), w, 0, h, pixel_format, &out, &size, subsamp, 90, flags), 0) << tjGetErrorStr2(tj);
  std::vector<uint8_t> bytes(out, out + size);
  tjFree(out);
  tjDestroy(tj);
  return bytes;
}

TEST(EncodedLoader, OnlyHardwareDecodableJpegsGoToTheDevice) {
  using loader::device_decodable_jpeg;
  for (int s : {TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_440})
    EXPECT_TRUE(device_decodable_jpeg(jpeg(64, 48, 1, s))) << "subsampling " << s;
  EXPECT_FALSE(device_decodable_jpeg(jpeg(64, 48, 1, TJSAMP_411)));
  EXPECT_FALSE(device_decodable_jpeg(jpeg(64, 48, 1, TJSAMP_GRAY)));
  EXPECT_FALSE(device_decodable_jpeg(jpeg(64, 48, 1, TJSAMP_420, TJFLAG_PROGRESSIVE)));
  EXPECT_FALSE(device_decodable_jpeg(jpeg(64, 48, 1, TJSAMP_444, 0, TJPF_CMYK)));
  std::vector<uint8_t> cut = jpeg(64, 48, 1, TJSAMP_420);
  cut.resize(cut.size() - 40);  // a file cut short: the CPU decoder reports (or skips) it
  EXPECT_FALSE(device_decodable_jpeg(cut));
  std::vector<uint8_t> padded = jpeg(64, 48, 1, TJSAMP_420);
  padded.insert(padded.end(), 16, 0);
  EXPECT_TRUE(device_decodable_jpeg(padded));
  EXPECT_FALSE(device_decodable_jpeg(std::vector<uint8_t>{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0}));
  EXPECT_FALSE(device_decodable_jpeg(std::vector<uint8_t>{0xFF, 0xD8, 0xFF}));
}

std::vector<uint8_t> format_file(const std::string& name) {
  std::ifstream f(std::string(BT_MEDIA_FORMATS_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(f.good()) << name;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The files nvJPEG cannot take that are not JPEGs: they go to the CPU workers, as progressive JPEGs do.
const char* const kOtherFormats[] = {"lossy.webp", "animated.gif", "rle8.bmp", "ycbcr_jpeg.tif", "extraneous4.jpg"};

// Baseline JPEGs of several sizes, plus one progressive and one grayscale that stay on the CPU, and with_formats:
// a WebP, a GIF, a BMP, a TIFF and a JPEG with a libjpeg warning.
class MixedSet : public data::Dataset {
 public:
  explicit MixedSet(size_t n, bool with_formats = false) {
    const int sizes[][2] = {{300, 220}, {140, 90}, {64, 48}, {257, 129}, {520, 260}};
    for (int i = 0; i < 5; ++i) files_.push_back(jpeg(sizes[i][0], sizes[i][1], i, i % 2 ? TJSAMP_444 : TJSAMP_420));
    files_.push_back(jpeg(200, 150, 7, TJSAMP_420, TJFLAG_PROGRESSIVE));
    files_.push_back(jpeg(90, 160, 8, TJSAMP_GRAY));
    if (with_formats)
      for (const char* name : kOtherFormats) files_.push_back(format_file(name));
    for (size_t i = 0; i < n; ++i) {
      keys_.push_back(std::string("k").append(std::to_string(i % files_.size())));  // no GCC 12 -Wrestrict
      caps_.push_back("c");
    }
  }
  size_t size() const override { return keys_.size(); }
  const std::string& caption(size_t i) const override { return caps_[i]; }
  const std::string& image_key(size_t i) const override { return keys_[i]; }
  void read_image(size_t i, std::vector<uint8_t>& b) const override { b = files_[i % files_.size()]; }
  std::string describe(size_t i) const override { return "mixed:" + std::to_string(i); }
  const std::vector<uint8_t>& file(size_t row) const { return files_[row % files_.size()]; }

 private:
  std::vector<std::vector<uint8_t>> files_;
  std::vector<std::string> keys_, caps_;
};

constexpr int kSize = 32;

loader::LoaderOptions options(media::TransformMode mode, bool encoded, bool dct) {
  loader::LoaderOptions o;
  o.num_workers = 2;
  o.batch_size = 6;
  o.transform.image_size = kSize;
  o.transform.mode = mode;
  o.transform.dct_scaling = dct;
  o.output_decoded = encoded;
  o.ship_device_jpegs = encoded;
  o.decoded_cache_mb = 0;
  o.sampler.seed = 11;
  return o;
}

// What a device does with a batch, on the CPU: the upload prefix, the shipped JPEGs decoded (full scale) into
// their layout slots, then the kernel's reference.
std::vector<float> device_path_on_cpu(const loader::Batch& b, cuda::DeviceLayout& l) {
  cuda::layout_of(b.decoded.samples, l);
  std::vector<uint8_t> input(l.input_bytes);
  std::memcpy(input.data(), b.decoded.packed.data(), l.upload_bytes);
  media::ImageU8 img;
  for (size_t k = 0; k < l.jpegs.size(); ++k) {
    media::decode_rgb8({b.decoded.packed.data() + l.jpeg_at[k], l.jpeg_bytes[k]}, uint64_t{1} << 30, img);
    const size_t bytes = static_cast<size_t>(img.width) * img.height * 3;  // pixels has a spare SIMD byte
    std::memcpy(input.data() + l.offsets[l.jpegs[k]], img.pixels.data(), bytes);
  }
  const auto plan = cuda::make_plan(l.specs, l.offsets, l.input_bytes, kSize, cuda::OutputType::kFloat32);
  std::vector<float> out(plan.output_bytes() / sizeof(float));
  cuda::reference_run(plan, input.data(), out.data());
  return out;
}

TEST(EncodedLoader, ShippedJpegsThroughTheDeviceLayoutEqualTheCpuLoader) {
  auto ds = std::make_shared<MixedSet>(24, true);
  for (auto mode : {media::TransformMode::kEval, media::TransformMode::kTrain}) {
    loader::Loader enc(ds, options(mode, true, true));
    loader::Loader cpu_full(ds, [&] { auto o = options(mode, false, false); o.output_float = true; return o; }());
    loader::Loader cpu_dct(ds, [&] { auto o = options(mode, false, true); o.output_float = true; return o; }());
    size_t shipped = 0, decoded_here = 0;
    float max_diff = 0;
    cuda::DeviceLayout layout;
    while (auto b = enc.next()) {
      auto full = cpu_full.next(), dct = cpu_dct.next();
      ASSERT_TRUE(full && dct);
      ASSERT_EQ(b->rows, full->rows);
      const std::vector<float> got = device_path_on_cpu(*b, layout);
      const size_t per = static_cast<size_t>(3) * kSize * kSize;
      for (int j = 0; j < b->size; ++j) {
        const loader::DecodedSample& s = b->decoded.samples[j];
        const std::vector<uint8_t>& file = ds->file(b->rows[j]);
        ASSERT_EQ(s.encoded, loader::device_decodable_jpeg(file)) << "row " << b->rows[j];
        if (s.encoded) {
          ++shipped;
          EXPECT_EQ(s.plan.scale_num, 8);
          ASSERT_EQ(s.encoded_bytes, file.size());
          EXPECT_EQ(std::memcmp(b->decoded.packed.data() + s.offset, file.data(), file.size()), 0);
        } else {
          ++decoded_here;
        }
        const float* want = (s.encoded ? full : dct)->pixels.data() + j * per;
        for (size_t k = 0; k < per; ++k) max_diff = std::max(max_diff, std::abs(got[j * per + k] - want[k]));
      }
    }
    EXPECT_GT(shipped, 0u);
    EXPECT_GT(decoded_here, 0u) << "the progressive and grayscale JPEGs must stay on the CPU";
    EXPECT_EQ(enc.stats().cpu_decoded, decoded_here) << "the run reports how many the CPU decoded";
    EXPECT_EQ(cpu_full.stats().cpu_decoded, 0u) << "counted in encoded mode only";
    EXPECT_LT(max_diff, 1.0f / 255 / 0.26f + 1e-5f) << "more than one level from the CPU loader";
  }
}

TEST(EncodedLoader, OtherFormatsGoToTheCpuWorkersAndAreCounted) {
  for (const char* name : kOtherFormats) EXPECT_FALSE(loader::device_decodable_jpeg(format_file(name))) << name;
  auto ds = std::make_shared<MixedSet>(12, true);  // rows 7..11: the other formats, once each
  loader::Loader enc(ds, options(media::TransformMode::kEval, true, true));
  size_t others = 0;
  while (auto b = enc.next())
    for (int j = 0; j < b->size; ++j)
      if (b->rows[j] % 12 >= 7) {
        ++others;
        EXPECT_FALSE(b->decoded.samples[j].encoded) << "row " << b->rows[j];
        EXPECT_GT(b->decoded.samples[j].width, 0);
      }
  EXPECT_EQ(others, 5u);
  EXPECT_EQ(enc.stats().cpu_decoded, others + 2) << "the five formats, the progressive and the grey JPEG";
  EXPECT_EQ(enc.stats().decoded_with_warnings, 1u) << "extraneous4.jpg: decoded through libjpeg's warning";
}

// The decoded cache (eval) serves WebP, GIF, BMP, TIFF and the warning JPEG as their decode: a key's later rows are
// hits, and every batch equals the cache-off loader's. Inline (num_workers 0): the hit count is exact.
TEST(EncodedLoader, TheDecodedCacheServesTheOtherFormatsAsTheirDecode) {
  auto ds = std::make_shared<MixedSet>(36, true);  // 12 files, each named by 3 rows
  auto o = options(media::TransformMode::kEval, false, false);
  o.num_workers = 0;
  loader::Loader uncached(ds, o);
  o.decoded_cache_mb = 16;
  loader::Loader cached(ds, o);
  while (auto b = cached.next()) {
    auto want = uncached.next();
    ASSERT_TRUE(want);
    ASSERT_EQ(b->rows, want->rows);
    ASSERT_EQ(b->pixels.size(), want->pixels.size());
    EXPECT_EQ(std::memcmp(b->pixels.data(), want->pixels.data(), b->pixels.size() * sizeof(float)), 0);
  }
  EXPECT_EQ(cached.stats().cache_misses, 12u);
  EXPECT_EQ(cached.stats().cache_hits, 24u) << "every file, the other formats included, served from the cache";
  EXPECT_EQ(cached.stats().decoded_with_warnings, 1u) << "extraneous4.jpg counted once, at its decode";
}

TEST(EncodedLoader, WithoutTheOptionNothingIsShipped) {
  auto ds = std::make_shared<MixedSet>(12);
  auto o = options(media::TransformMode::kEval, true, true);
  o.ship_device_jpegs = false;
  loader::Loader l(ds, o);
  while (auto b = l.next())
    for (const auto& s : b->decoded.samples) EXPECT_FALSE(s.encoded);
}

}  // namespace
}  // namespace bt
