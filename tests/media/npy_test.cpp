#include <gtest/gtest.h>

#include "media/npy.h"

namespace bt::media {
namespace {

TEST(MediaNpy, HeaderIsNumpyV1AndAligned) {
  const uint8_t data[6] = {1, 2, 3, 4, 5, 6};
  const std::string b = npy_bytes(data, 1, "|u1", {1, 2, 3});
  ASSERT_GE(b.size(), 16u);
  EXPECT_EQ(b.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t hlen = uint8_t(b[8]) | (uint8_t(b[9]) << 8);
  EXPECT_EQ((10 + hlen) % 64, 0u);
  const std::string header = b.substr(10, hlen);
  EXPECT_NE(header.find("'descr': '|u1'"), std::string::npos);
  EXPECT_NE(header.find("'shape': (1, 2, 3)"), std::string::npos);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(b.size(), 10 + hlen + 6);
  EXPECT_EQ(b.substr(10 + hlen), std::string("\1\2\3\4\5\6", 6));
}

TEST(MediaNpy, OneDimensionalShapeKeepsComma) {
  const float f[2] = {1.f, 2.f};
  const std::string b = npy_bytes(f, 4, "<f4", {2});
  EXPECT_NE(b.find("'shape': (2,)"), std::string::npos);
  EXPECT_EQ(b.size() % 64, 8u);  // header block is 64-aligned, 8 data bytes follow
}

}  // namespace
}  // namespace bt::media
