// media::read_jpeg_frame against Pillow's own reading of the golden JPEGs (Image.open(...).layer, .info), and
// on malformed bytes: a one-line error, never a read past the span.
#include <gtest/gtest.h>

#include "common/error.h"
#include "media/jpeg_frame.h"
#include "media_test_util.h"

namespace bt::media {
namespace {

using testing::golden_path;
using testing::read_bytes;

JpegFrame frame_of(const char* name) { return read_jpeg_frame(read_bytes(golden_path(name))); }

void expect_components(const JpegFrame& f, std::vector<JpegComponent> want) {
  ASSERT_EQ(f.num_components, static_cast<int>(want.size()));
  for (size_t c = 0; c < want.size(); ++c) {
    EXPECT_EQ(f.components[c].id, want[c].id) << c;
    EXPECT_EQ(f.components[c].h, want[c].h) << c;
    EXPECT_EQ(f.components[c].v, want[c].v) << c;
  }
}

TEST(JpegFrame, ReadsWhatPillowReads) {
  const JpegFrame base = frame_of("cartoon_300x301.jpg");  // Pillow: layer (1,2,2) (2,1,1) (3,1,1), baseline
  EXPECT_EQ(base.sof, 0);
  EXPECT_EQ(base.precision, 8);
  EXPECT_EQ(base.width, 300);
  EXPECT_EQ(base.height, 301);
  expect_components(base, {{1, 2, 2}, {2, 1, 1}, {3, 1, 1}});
  EXPECT_EQ(base.adobe_transform, -1);
  EXPECT_TRUE(base.ends_with_eoi);

  const JpegFrame prog = frame_of("progressive.jpg");  // Pillow: info["progressive"] == 1
  EXPECT_EQ(prog.sof, 2);
  EXPECT_EQ(prog.width, 40);
  EXPECT_EQ(prog.height, 30);

  expect_components(frame_of("sub444.jpg"), {{1, 1, 1}, {2, 1, 1}, {3, 1, 1}});
  expect_components(frame_of("gray.jpg"), {{1, 1, 1}});

  const JpegFrame cmyk = frame_of("cmyk.jpg");  // Pillow: adobe 100, adobe_transform 0, ids C M Y K
  expect_components(cmyk, {{'C', 1, 1}, {'M', 1, 1}, {'Y', 1, 1}, {'K', 1, 1}});
  EXPECT_EQ(cmyk.adobe_transform, 0);
}

TEST(JpegFrame, EndOfImageMarkerTellsACutFile) {
  std::vector<uint8_t> b = read_bytes(golden_path("sub444.jpg"));
  b.insert(b.end(), {0, 0, 0});  // zero padding after EOI is still a whole file
  EXPECT_TRUE(read_jpeg_frame(b).ends_with_eoi);
  b.resize(b.size() * 2 / 3);
  EXPECT_FALSE(read_jpeg_frame(b).ends_with_eoi);  // the frame header is still there
}

TEST(JpegFrame, MalformedBytesThrowOneLine) {
  const std::vector<uint8_t> whole = read_bytes(golden_path("sub444.jpg"));
  auto error_of = [](std::vector<uint8_t> b) -> std::string {
    try {
      read_jpeg_frame(b);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of({0x89, 'P', 'N', 'G'}).find("not a JPEG"), std::string::npos);
  EXPECT_NE(error_of({0xFF, 0xD8, 0xFF, 0xE0, 0x40, 0x00, 0x01}).find("0xFFE0 runs past the end"), std::string::npos);
  EXPECT_NE(error_of({0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0xFF, 0xD9}).find("no frame header"), std::string::npos);
  EXPECT_NE(error_of({0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x05, 8, 0, 1}).find("too short"), std::string::npos);
  // Every prefix of a real file: an answer or an error, never a read past the span (ASan checks).
  for (size_t n = 0; n <= whole.size(); n += 7) {
    std::vector<uint8_t> cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
    try {
      read_jpeg_frame(cut);
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace bt::media
