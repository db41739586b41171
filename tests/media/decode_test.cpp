// Decoding every colour layout to RGB8 must equal Pillow's Image.open(f).convert("RGB") byte for byte.
#include <gtest/gtest.h>

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

TEST(MediaDecode, SniffsFromBytesNotNames) {
  EXPECT_EQ(sniff_format(read_bytes(golden_path("gray.jpg"))), ImageFormat::kJpeg);
  EXPECT_EQ(sniff_format(read_bytes(golden_path("palette.png"))), ImageFormat::kPng);
  const uint8_t junk[] = {'G', 'I', 'F', '8', '9', 'a', 0, 0};
  EXPECT_EQ(sniff_format(junk), ImageFormat::kUnknown);
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
