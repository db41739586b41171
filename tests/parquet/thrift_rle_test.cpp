// Unit tests of the two low-level decoders: the Thrift compact protocol and the RLE/bit-packed hybrid.
#include <gtest/gtest.h>

#include <vector>

#include "common/error.h"
#include "parquet/rle.h"
#include "parquet/thrift_compact.h"

namespace bt::parquet {
namespace {

TEST(ParquetRle, DecodesRleAndBitPackedRuns) {
  // RLE run: 5 x value 3 (bit width 2 -> 1 byte); bit-packed run: 1 group of 8 values 0..3,0..3 in 2 bytes.
  std::vector<uint8_t> d = {5 << 1, 3, (1 << 1) | 1, 0b11100100, 0b11100100};
  RleDecoder r(d.data(), d.size(), 2);
  std::vector<uint32_t> out(13);
  r.decode(out.data(), out.size());
  EXPECT_EQ(out, (std::vector<uint32_t>{3, 3, 3, 3, 3, 0, 1, 2, 3, 0, 1, 2, 3}));
}

TEST(ParquetRle, WideValuesAndTruncation) {
  // Bit width 20: an RLE run of value 0xABCDE (3 bytes), then the data ends.
  std::vector<uint8_t> d = {2 << 1, 0xDE, 0xBC, 0x0A};
  RleDecoder r(d.data(), d.size(), 20);
  uint32_t out[3];
  r.decode(out, 2);
  EXPECT_EQ(out[0], 0xABCDEu);
  EXPECT_EQ(out[1], 0xABCDEu);
  EXPECT_THROW(r.decode(out, 1), Error);
  EXPECT_THROW(RleDecoder(d.data(), d.size(), 33), Error);
}

TEST(ParquetRle, BitWidthFor) {
  EXPECT_EQ(bit_width_for(0), 0);
  EXPECT_EQ(bit_width_for(1), 1);
  EXPECT_EQ(bit_width_for(2), 2);
  EXPECT_EQ(bit_width_for(255), 8);
  EXPECT_EQ(bit_width_for(256), 9);
}

TEST(ParquetThrift, ReadsFieldsAndSkipsUnknownOnes) {
  // struct { 1: i32 = -3, 2: string "ab", 5: list<i32> [1, 2], 6: struct { 1: bool true }, 7: i64 = 300 }
  std::vector<uint8_t> d = {0x15, 0x05, 0x18, 2, 'a', 'b', 0x39, 0x25, 2, 4, 0x1c, 0x11, 0x00, 0x16, 0xd8, 0x04, 0x00};
  CompactReader r(d.data(), d.size());
  r.begin_struct();
  int16_t id;
  TType t;
  ASSERT_TRUE(r.next_field(id, t));
  EXPECT_EQ(id, 1);
  EXPECT_EQ(r.read_i32(t), -3);
  ASSERT_TRUE(r.next_field(id, t));
  EXPECT_EQ(id, 2);
  EXPECT_EQ(r.read_string(t), "ab");
  ASSERT_TRUE(r.next_field(id, t));
  EXPECT_EQ(id, 5);
  r.skip(t);
  ASSERT_TRUE(r.next_field(id, t));
  EXPECT_EQ(id, 6);
  r.skip(t);
  ASSERT_TRUE(r.next_field(id, t));
  EXPECT_EQ(id, 7);
  EXPECT_EQ(r.read_i64(t), 300);
  EXPECT_FALSE(r.next_field(id, t));
  EXPECT_EQ(r.position(), d.size());
}

TEST(ParquetThrift, RejectsTruncatedAndOversizedData) {
  std::vector<uint8_t> truncated = {0x18, 10, 'a'};  // string of 10 bytes, 1 present
  CompactReader r(truncated.data(), truncated.size());
  r.begin_struct();
  int16_t id;
  TType t;
  ASSERT_TRUE(r.next_field(id, t));
  EXPECT_THROW(r.read_string(t), Error);

  std::vector<uint8_t> biglist = {0x19, 0xf5, 0xff, 0xff, 0xff, 0x0f};  // list of ~4e9 i32s
  CompactReader r2(biglist.data(), biglist.size());
  r2.begin_struct();
  ASSERT_TRUE(r2.next_field(id, t));
  TType et;
  EXPECT_THROW(r2.read_list(t, et), Error);

  std::vector<uint8_t> deep(200, 0x1c);  // struct in struct in struct ...
  CompactReader r3(deep.data(), deep.size());
  r3.begin_struct();
  ASSERT_TRUE(r3.next_field(id, t));
  EXPECT_THROW(r3.skip(t), Error);
}

}  // namespace
}  // namespace bt::parquet
