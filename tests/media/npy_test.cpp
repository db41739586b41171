#include <gtest/gtest.h>

#include "media/npy.h"

#include "common/error.h"

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

std::string parse_error(const std::string& b) {
  try {
    parse_npy_f32_matrix({reinterpret_cast<const uint8_t*>(b.data()), b.size()}, "x.npy");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(MediaNpy, MatrixRoundTripsAndRefusesWhatDoesNotFit) {
  const float f[6] = {1, 2, 3, 4, 5, 6};
  const std::string b = npy_bytes(f, 4, "<f4", {2, 3});
  const NpyMatrix m = parse_npy_f32_matrix({reinterpret_cast<const uint8_t*>(b.data()), b.size()}, "x.npy");
  EXPECT_EQ(m.rows, 2);
  EXPECT_EQ(m.cols, 3);
  EXPECT_EQ(b.substr(m.data_offset), std::string(reinterpret_cast<const char*>(f), 24));
  EXPECT_NE(parse_error(b.substr(0, b.size() - 4)).find("does not match"), std::string::npos);
  EXPECT_NE(parse_error(npy_bytes(f, 4, "<f4", {6})).find("not (rows, cols)"), std::string::npos);
  EXPECT_NE(parse_error(npy_bytes(f, 1, "|u1", {2, 3})).find("'<f4'"), std::string::npos);
  EXPECT_NE(parse_error("hello").find("not a .npy file"), std::string::npos);
  // rows x cols x 4 would overflow 64 bits: still just "does not match".
  const std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627775, 1099511627775), }\n";
  std::string huge("\x93NUMPY\x01\x00", 8);
  huge += char(h.size() & 0xff), huge += char(h.size() >> 8), huge += h, huge.append(24, '\0');
  EXPECT_NE(parse_error(huge).find("does not match"), std::string::npos);
  std::string cut = b;
  cut[8] = char(0xff), cut[9] = char(0xff);  // header length past the end
  EXPECT_NE(parse_error(cut).find("past the end"), std::string::npos);
}

}  // namespace
}  // namespace bt::media
