// Bad bytes must give bt::Error with a reason, never a crash, hang or huge allocation.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/error.h"
#include "media/decode.h"
#include "media/transform.h"
#include "media_test_util.h"

namespace bt::media {
namespace {
using namespace testing;

std::string decode_error(const std::vector<uint8_t>& b, uint64_t max_pixels = kDefaultMaxImagePixels) {
  ImageU8 img;
  try {
    decode_rgb8(b, max_pixels, img);
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "";
}

TEST(MediaBadInput, ZeroBytes) { EXPECT_NE(decode_error({}).find("empty"), std::string::npos); }

TEST(MediaBadInput, NotAnImage) {
  const std::string e = decode_error({'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'});
  EXPECT_NE(e.find("not an image file: not JPEG, PNG, WebP, GIF, BMP or TIFF"), std::string::npos) << e;
  // A caption row may name any file: its contents never appear in the message, neither raw nor as hex.
  EXPECT_EQ(e.find("hello"), std::string::npos) << e;
  EXPECT_EQ(e.find("68 65"), std::string::npos) << e;
}

TEST(MediaBadInput, TruncatedJpeg) {
  auto b = read_bytes(golden_path("cartoon_736x699.jpg"));
  for (size_t keep : {b.size() / 2, b.size() - 100, size_t(700), size_t(3)}) {
    std::vector<uint8_t> t(b.begin(), b.begin() + keep);
    const std::string e = decode_error(t);
    EXPECT_FALSE(e.empty()) << keep;
    if (keep > 1000) {
      EXPECT_NE(e.find("truncated JPEG"), std::string::npos) << e;
    }
  }
}

TEST(MediaBadInput, TruncatedProgressiveJpeg) {
  auto b = read_bytes(golden_path("progressive.jpg"));
  std::vector<uint8_t> t(b.begin(), b.begin() + b.size() * 2 / 3);
  EXPECT_FALSE(decode_error(t).empty());
}

TEST(MediaBadInput, TruncatedPng) {
  auto b = read_bytes(golden_path("cartoon_288x288.png"));
  for (size_t keep : {b.size() / 2, size_t(40), size_t(9)}) {
    std::vector<uint8_t> t(b.begin(), b.begin() + keep);
    const std::string e = decode_error(t);
    EXPECT_NE(e.find("PNG"), std::string::npos) << keep << ": " << e;
  }
}

TEST(MediaBadInput, CorruptPngCrc) {
  auto b = read_bytes(golden_path("palette.png"));
  b[20] ^= 0x55;  // inside IHDR: its CRC no longer matches
  EXPECT_FALSE(decode_error(b).empty());
}

TEST(MediaBadInput, RandomBytesNeverCrash) {
  std::mt19937 rng(7);
  const auto jpg = read_bytes(golden_path("gray.jpg"));
  const auto png = read_bytes(golden_path("rgba.png"));
  int errors = 0;
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> b = (i % 3 == 0) ? jpg : (i % 3 == 1) ? png : std::vector<uint8_t>(64);
    for (int k = 0; k < 8; ++k) b[rng() % b.size()] = uint8_t(rng());
    if (i % 3 == 2) b[0] = 0xFF, b[1] = 0xD8, b[2] = 0xFF;
    ImageU8 img;
    try {
      decode_rgb8(b, 1 << 22, img);
    } catch (const bt::Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);  // plain junk after a JPEG signature always fails
}

TEST(MediaBadInput, JpegBombRefusedBeforeAllocating) {
  const auto b = with_jpeg_size(read_bytes(golden_path("gray.jpg")), 30000, 30000);
  const std::string e = decode_error(b);
  EXPECT_NE(e.find("image 30000x30000 exceeds --max_image_pixels 89478485 (decompression bomb?)"), std::string::npos)
      << e;
  auto scratch = make_scratch();
  std::vector<uint8_t> out(288 * 288 * 3);
  EXPECT_THROW(transform_to_u8(b, TransformSpec{}, 1, out.data(), *scratch), bt::Error);
}

TEST(MediaBadInput, MaxPixelsIsConfigurable) {
  const auto b = read_bytes(golden_path("cartoon_736x699.jpg"));
  EXPECT_NE(decode_error(b, 736 * 699 - 1).find("exceeds"), std::string::npos);
  EXPECT_EQ(decode_error(b, 736 * 699), "");
  const auto png = read_bytes(golden_path("cartoon_288x288.png"));
  EXPECT_NE(decode_error(png, 1000).find("exceeds"), std::string::npos);
}

}  // namespace
}  // namespace bt::media

namespace bt::media {
namespace {
using namespace testing;

// libjpeg warns about junk between the entropy data and the EOI marker; Pillow decodes such files, so do we.
TEST(MediaBadInput, ExtraneousBytesWarningIsTolerated) {
  auto b = read_bytes(golden_path("gray.jpg"));
  ASSERT_EQ(b[b.size() - 2], 0xFF);
  ASSERT_EQ(b[b.size() - 1], 0xD9);
  ImageU8 want, got;
  decode_rgb8(b, kDefaultMaxImagePixels, want);
  b.insert(b.end() - 2, {0x12, 0x34, 0x56});
  decode_rgb8(b, kDefaultMaxImagePixels, got);
  ASSERT_EQ(got.width, want.width);
  EXPECT_EQ(0, std::memcmp(got.pixels.data(), want.pixels.data(), size_t(want.width) * want.height * 3));
}

TEST(MediaBadInput, DecoderRecoversAfterAnError) {
  // A failed decode must not poison the thread's TurboJPEG handle for the next file.
  const auto good = read_bytes(golden_path("sub444.jpg"));
  std::vector<uint8_t> bad(good.begin(), good.begin() + good.size() / 3);
  ImageU8 img;
  EXPECT_THROW(decode_rgb8(bad, kDefaultMaxImagePixels, img), bt::Error);
  EXPECT_NO_THROW(decode_rgb8(good, kDefaultMaxImagePixels, img));
  EXPECT_EQ(img.width, 40);
}

}  // namespace
}  // namespace bt::media
