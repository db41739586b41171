// Decoding every colour layout to RGB8 must equal Pillow's Image.open(f).convert("RGB") byte for byte.
#include <gtest/gtest.h>

#include "common/error.h"
#include "media/decode.h"
#include "media_test_util.h"

namespace bt::media {
namespace {
using namespace testing;

TEST(MediaDecode, MatchesPillowConvertRgb) {
  const auto cases = manifest("decode");
  ASSERT_GE(cases.size(), 10u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c[1]);
    const ImageU8 img = decode_file(c[1]);
    ASSERT_EQ(img.width, std::stoi(c[2]));
    ASSERT_EQ(img.height, std::stoi(c[3]));
    const auto want = read_bytes(golden_path(c[4]));
    ASSERT_EQ(want.size(), size_t(img.width) * img.height * 3);
    const Diff d = compare(img.pixels.data(), want.data(), want.size());
    EXPECT_EQ(d.max_abs, 0) << "mean abs " << d.mean_abs;
  }
}

// Bytes of `jpeg` with `n` junk bytes inserted before its first `marker` (FF marker): libjpeg's "Corrupt JPEG data:
// n extraneous bytes before marker 0x.." warning, which Pillow (and every browser) decodes through.
std::vector<uint8_t> with_extraneous_bytes(const std::vector<uint8_t>& jpeg, uint8_t marker, size_t n) {
  for (size_t i = 2; i + 1 < jpeg.size(); ++i)
    if (jpeg[i] == 0xFF && jpeg[i + 1] == marker) {
      std::vector<uint8_t> b(jpeg.begin(), jpeg.begin() + i);
      b.insert(b.end(), n, 0x12);
      b.insert(b.end(), jpeg.begin() + i, jpeg.end());
      return b;
    }
  ADD_FAILURE() << "no marker " << int(marker);
  return jpeg;
}

TEST(MediaDecode, JpegWarningsDecodeAsPillowDoes) {
  const auto clean = read_bytes(golden_path("cartoon_300x301.jpg"));
  const ImageU8 want = decode_file("cartoon_300x301.jpg");
  const ImageU8 want_half = decode_file("cartoon_300x301.jpg", 4);
  // The four files: 1, 4, 5 and 16 extraneous bytes before the DQT (0xdb); then before DHT and SOS, and
  // after the scan, before EOI (a warning of the decode, not of the header; more bytes than the Huffman decoder
  // reads ahead, which takes a few without a warning).
  const std::pair<uint8_t, size_t> cases[] = {{0xDB, 1}, {0xDB, 4}, {0xDB, 5}, {0xDB, 16},
                                              {0xC4, 3}, {0xDA, 2}, {0xD9, 32}};
  for (const auto& [marker, n] : cases) {
    SCOPED_TRACE(::testing::Message() << n << " bytes before 0x" << std::hex << int(marker));
    const auto b = with_extraneous_bytes(clean, marker, n);
    ImageInfo info;
    ASSERT_NO_THROW(info = probe_image(b, 89478485));
    EXPECT_EQ(info.width, 300);
    EXPECT_EQ(info.height, 301);
    for (int scale : {8, 4}) {
      ImageU8 img;
      ASSERT_NO_THROW(decode_rgb8(b, 89478485, img, scale));
      const ImageU8& w = scale == 8 ? want : want_half;
      ASSERT_EQ(img.width, w.width);
      EXPECT_EQ(compare(img.pixels.data(), w.pixels.data(), w.stride() * w.height).max_abs, 0);
      EXPECT_TRUE(img.decoded_with_warnings) << "the run counts it";
      ASSERT_NO_THROW(decode_rgb8(clean, 89478485, img, scale));  // the same buffer: the flag is per image
      EXPECT_FALSE(img.decoded_with_warnings);
    }
  }
  // A file cut short is still refused, as Pillow refuses it ("image file is truncated").
  auto cut = with_extraneous_bytes(clean, 0xDB, 4);
  cut.resize(cut.size() / 2);
  ImageU8 img;
  EXPECT_THROW(decode_rgb8(cut, 89478485, img), bt::Error);
}

// Decided on purpose (README, "How the file is read"): where Pillow's own parsing refuses a file its decoding
// library reads, bridgetune reads it. A JPEG whose EXIF segment holds a cut-short TIFF header: Pillow 9.4 raises
// "cannot identify image file"; libjpeg skips the segment, and the picture is the file's without it.
TEST(MediaDecode, JpegWithACutShortExifSegmentDecodes) {
  const auto clean = read_bytes(golden_path("cartoon_300x301.jpg"));
  const uint8_t app1[] = {0xFF, 0xE1, 0, 14, 'E', 'x', 'i', 'f', 0, 0, 'I', 'I', '*', 0, 8, 0};
  std::vector<uint8_t> b(clean.begin(), clean.begin() + 2);
  b.insert(b.end(), app1, app1 + sizeof app1);
  b.insert(b.end(), clean.begin() + 2, clean.end());
  ImageU8 img;
  ASSERT_NO_THROW(decode_rgb8(b, 89478485, img));
  const ImageU8 want = decode_file("cartoon_300x301.jpg");
  ASSERT_EQ(img.width, want.width);
  EXPECT_EQ(compare(img.pixels.data(), want.pixels.data(), want.stride() * want.height).max_abs, 0);
}

TEST(MediaDecode, SniffsFromBytesNotNames) {
  EXPECT_EQ(sniff_format(read_bytes(golden_path("gray.jpg"))), ImageFormat::kJpeg);
  EXPECT_EQ(sniff_format(read_bytes(golden_path("palette.png"))), ImageFormat::kPng);
  const uint8_t junk[] = {'G', 'I', 'F', '8', '9', 'b', 0, 0};
  EXPECT_EQ(sniff_format(junk), ImageFormat::kUnknown);
  const auto bytes = [](const char* s, size_t n) { return std::vector<uint8_t>(s, s + n); };
  EXPECT_EQ(sniff_format(bytes("GIF89a\0\0", 8)), ImageFormat::kGif);
  EXPECT_EQ(sniff_format(bytes("GIF87a\0\0", 8)), ImageFormat::kGif);
  EXPECT_EQ(sniff_format(bytes("RIFF\0\0\0\0WEBPVP8 ", 16)), ImageFormat::kWebp);
  EXPECT_EQ(sniff_format(bytes("RIFF\0\0\0\0WAVEfmt ", 16)), ImageFormat::kUnknown);
  EXPECT_EQ(sniff_format(bytes("BM\0\0\0\0", 6)), ImageFormat::kBmp);
  EXPECT_EQ(sniff_format(bytes("II*\0\0\0", 6)), ImageFormat::kTiff);
  EXPECT_EQ(sniff_format(bytes("MM\0*\0\0", 6)), ImageFormat::kTiff);
  EXPECT_EQ(sniff_format(bytes("II+\0\0\0", 6)), ImageFormat::kTiff);  // BigTIFF
  EXPECT_EQ(sniff_format(bytes("MZ\0\0\0\0", 6)), ImageFormat::kUnknown);
}

TEST(MediaDecode, ProbeGivesFullSize) {
  const auto b = read_bytes(golden_path("cartoon_736x699.jpg"));
  const ImageInfo info = probe_image(b, 89478485);
  EXPECT_EQ(info.format, ImageFormat::kJpeg);
  EXPECT_EQ(info.width, 736);
  EXPECT_EQ(info.height, 699);
}

TEST(MediaDecode, DctScaledDecodeSize) {
  const ImageU8 half = decode_file("cartoon_736x699.jpg", 4);
  EXPECT_EQ(half.width, 368);
  EXPECT_EQ(half.height, 350);
  const ImageU8 eighth = decode_file("cartoon_736x699.jpg", 1);
  EXPECT_EQ(eighth.width, 92);
  EXPECT_EQ(eighth.height, 88);
}

TEST(MediaDecode, ChooseJpegScale) {
  // 736x699 -> 288: 4/8 gives 368x350 (>= 288), 3/8 gives 276x263 (too small).
  EXPECT_EQ(choose_jpeg_scale(736, 699, 736, 699, 288), 4);
  EXPECT_EQ(choose_jpeg_scale(2400, 1600, 2400, 1600, 288), 2);
  EXPECT_EQ(choose_jpeg_scale(200, 200, 200, 200, 288), 8);  // never upscale in the DCT
  EXPECT_EQ(choose_jpeg_scale(288, 288, 288, 288, 288), 8);
  // A train crop: only the 1200x800 region must stay >= 288 (3/8: 450x300; 2/8 would give 300x200).
  EXPECT_EQ(choose_jpeg_scale(2400, 1600, 1200, 800, 288), 3);
}

}  // namespace
}  // namespace bt::media
