// Hostile WebP, GIF, BMP and TIFF files end in one line (bt::Error, no newline), never a crash, hang or an
// allocation past the decode budget: decompression bombs (a 1x1 GIF declaring 65535x65535, a TIFF of huge
// strips or tiles, a WebP whose header lies), files cut short at every length, and random corruption.
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

std::vector<uint8_t> corpus_file(const std::string& name) { return read_bytes(std::string(BT_MEDIA_FORMATS_DIR) + "/" + name); }

// The error decoding (and transforming) `b` gives; "" when it decodes.
std::string error_of(const std::vector<uint8_t>& b, uint64_t max_pixels = kDefaultMaxImagePixels) {
  try {
    ImageU8 img;
    decode_rgb8(b, max_pixels, img);
    TransformSpec spec;
    spec.image_size = 16;
    spec.max_image_pixels = max_pixels;
    std::vector<uint8_t> out(16 * 16 * 3);
    auto scratch = make_scratch();
    transform_to_u8(b, spec, 1, out.data(), *scratch);
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "";
}

void put16le(std::vector<uint8_t>& b, size_t at, unsigned v) { b[at] = uint8_t(v), b[at + 1] = uint8_t(v >> 8); }
void put32le(std::vector<uint8_t>& b, size_t at, uint32_t v) { put16le(b, at, v & 0xFFFF), put16le(b, at + 2, v >> 16); }

void expect_one_line(const std::string& e, const std::string& want) {
  EXPECT_NE(e.find(want), std::string::npos) << "want \"" << want << "\" in: " << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(MediaFormatBadInput, GifDeclaringAHugeScreenIsABomb) {
  // A 1x1 image on a 65535x65535 logical screen: Pillow's size is the screen's.
  const uint8_t gif[] = {'G', 'I', 'F', '8', '9', 'a', 0xFF, 0xFF, 0xFF, 0xFF, 0x80, 0, 0, 0, 0, 0, 255, 255, 255,
                         0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0, 0x3B};
  expect_one_line(error_of({gif, gif + sizeof gif}), "exceeds --max_image_pixels");
  // A frame reaching past the screen grows the image (as in Pillow): the bomb check sees the grown size.
  auto b = corpus_file("palette.gif");
  size_t at = 13 + ((b[10] & 0x80) ? size_t(3) << ((b[10] & 7) + 1) : 0);  // past the global colour table
  while (at < b.size() && b[at] == 0x21) {  // extensions: introducer, label, sub-blocks
    at += 2;
    while (at < b.size() && b[at]) at += b[at] + 1;
    ++at;
  }
  ASSERT_LT(at, b.size());
  ASSERT_EQ(b[at], 0x2C) << "the image descriptor";
  put16le(b, at + 1, 60000), put16le(b, at + 3, 60000);
  expect_one_line(error_of(b), "exceeds --max_image_pixels");
}

TEST(MediaFormatBadInput, WebpWithALyingHeader) {
  auto b = corpus_file("lossy.webp");
  ASSERT_EQ(std::memcmp(b.data() + 12, "VP8 ", 4), 0);
  // VP8's key frame header (after the 3-byte tag and the 9d 01 2a start code): 14-bit width and height.
  put16le(b, 26, 16000), put16le(b, 28, 16000);
  expect_one_line(error_of(b), "exceeds --max_image_pixels");
  put16le(b, 26, 4000), put16le(b, 28, 4000);  // within the cap, data for 48x36
  expect_one_line(error_of(b), "WebP");
  // A budget of 2 bytes a pixel refuses what the cap allows but a decode cannot hold.
  put16le(b, 26, 9000), put16le(b, 28, 9000);
  expect_one_line(error_of(b), "needs");
}

// A one-strip RGB TIFF of width x height whose strip is its only data (LZW-compressed and cut short).
std::vector<uint8_t> tiff_claiming(uint32_t width, uint32_t height, uint32_t tile) {
  auto b = corpus_file("rgb_lzw.tif");
  const uint32_t ifd = uint32_t(b[4]) | uint32_t(b[5]) << 8 | uint32_t(b[6]) << 16 | uint32_t(b[7]) << 24;
  const unsigned n = unsigned(b[ifd]) | unsigned(b[ifd + 1]) << 8;
  for (unsigned i = 0; i < n; ++i) {
    const size_t e = ifd + 2 + 12 * i;
    const unsigned tag = unsigned(b[e]) | unsigned(b[e + 1]) << 8;
    // Width, length and rows per strip as LONGs; a tile size replaces rows per strip when asked.
    if (tag == 256 || tag == 257 || tag == 278) {
      put16le(b, e + 2, 4), put32le(b, e + 4, 1);
      put32le(b, e + 8, tag == 256 ? width : tag == 257 ? height : height);
      if (tag == 278 && tile) put16le(b, e, 322), put32le(b, e + 8, tile);
    }
  }
  return b;
}

TEST(MediaFormatBadInput, TiffBombsAreRefused) {
  expect_one_line(error_of(tiff_claiming(100000, 100000, 0)), "exceeds --max_image_pixels");
  // Within the cap, one strip of 8000 rows: the row-at-a-time read keeps it small; the data ends early.
  expect_one_line(error_of(tiff_claiming(8000, 8000, 0)), "needs");  // 192 MB of RGB output
  expect_one_line(error_of(tiff_claiming(3000, 3000, 0)), "TIFF");
  // A tile of 60000^2 declared for a small image: refused before it is allocated.
  const std::string e = error_of(tiff_claiming(300, 200, 60000));
  EXPECT_FALSE(e.empty());
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(MediaFormatBadInput, BmpBombsAndShortData) {
  auto b = corpus_file("rgb24.bmp");
  put32le(b, 18, 100000), put32le(b, 22, 100000);
  expect_one_line(error_of(b), "exceeds --max_image_pixels");
  b = corpus_file("rgb24.bmp");
  put32le(b, 18, 4000), put32le(b, 22, 4000);
  expect_one_line(error_of(b), "truncated BMP");
  b = corpus_file("rle8.bmp");
  b.resize(b.size() - 200);  // the runs end before the last row: Pillow's "not enough image data"
  expect_one_line(error_of(b), "truncated BMP");
  b = corpus_file("palette8.bmp");
  put16le(b, 28, 7);
  expect_one_line(error_of(b), "unsupported BMP pixel depth");
}

TEST(MediaFormatBadInput, EveryCutOfEveryFormatIsOneLine) {
  for (const char* name : {"lossy.webp", "lossless_alpha.webp", "animated.webp", "interlaced.gif", "animated.gif",
                           "rgb24.bmp", "rle4.bmp", "rle8.bmp", "bitfields565.bmp", "rgb_lzw.tif", "ycbcr_jpeg.tif",
                           "tiled.tif", "planar.tif", "bilevel_g4.tif", "multipage.tif"}) {
    SCOPED_TRACE(name);
    const auto full = corpus_file(name);
    for (size_t keep : {size_t(1), size_t(7), size_t(20), full.size() / 3, full.size() / 2, full.size() - 3}) {
      std::vector<uint8_t> cut(full.begin(), full.begin() + std::min(keep, full.size()));
      const std::string e = error_of(cut);
      // Some formats keep their header at the end (TIFF) or pad their data: a cut may still decode.
      EXPECT_EQ(e.find('\n'), std::string::npos) << keep << ": " << e;
    }
    // Half a file is refused, but for the formats whose first frame or page may lie in its first half.
    if (std::string(name) != "animated.gif" && std::string(name) != "multipage.tif") {
      EXPECT_FALSE(error_of({full.begin(), full.begin() + full.size() / 2}).empty()) << "half a file is refused";
    }
  }
}

TEST(MediaFormatBadInput, RandomCorruptionNeverCrashes) {
  std::mt19937 rng(54);
  const char* names[] = {"lossy.webp", "lossless.webp", "palette.gif", "interlaced.gif", "rle8.bmp", "rle4.bmp",
                         "palette4.bmp", "rgb_lzw.tif", "ycbcr_jpeg.tif", "cmyk.tif", "tiled.tif", "grey16.tif"};
  for (const char* name : names) {
    const auto base = corpus_file(name);
    for (int i = 0; i < 40; ++i) {
      auto b = base;
      for (int k = 0; k < 6; ++k) b[8 + rng() % (b.size() - 8)] = uint8_t(rng());
      const std::string e = error_of(b, 1 << 22);
      EXPECT_EQ(e.find('\n'), std::string::npos) << name << ": " << e;
    }
  }
}

}  // namespace
}  // namespace bt::media
