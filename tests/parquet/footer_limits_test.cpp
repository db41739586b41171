// Hostile footers and chunks: list counts that would amplify one byte into a large struct, oversized footers
// and chunks claiming implausibly many rows are refused with a message, before memory is spent on them.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "common/error.h"
#include "parquet/column_chunk.h"
#include "parquet/metadata.h"
#include "parquet/parquet_file.h"
#include "test_util.h"

namespace bt::parquet {
namespace {

using test::error_of;

void put_varint(std::vector<uint8_t>& b, uint64_t v) {
  while (v >= 0x80) {
    b.push_back(uint8_t(v | 0x80));
    v >>= 7;
  }
  b.push_back(uint8_t(v));
}

// A list header of n structs (compact protocol: size 15 = "varint follows", element type 12).
void put_struct_list(std::vector<uint8_t>& b, uint64_t n) {
  b.push_back(0xFC);
  put_varint(b, n);
}

TEST(ParquetFooterLimits, RowGroupCountIsCapped) {
  // FileMetaData { 4: list<RowGroup> of 200,000 empty structs }: 200 KB that used to become 200,000 RowGroups.
  std::vector<uint8_t> f = {0x49};
  put_struct_list(f, 200000);
  f.insert(f.end(), 200000, 0x00);
  f.push_back(0x00);
  const std::string e = error_of([&] { parse_file_metadata(f.data(), f.size()); });
  EXPECT_EQ(e, "thrift: 200000 row groups, more than the limit of 100000");
}

TEST(ParquetFooterLimits, SchemaCountIsCapped) {
  std::vector<uint8_t> f = {0x29};
  put_struct_list(f, kMaxSchemaElements + 1);
  f.insert(f.end(), kMaxSchemaElements + 1, 0x00);
  f.push_back(0x00);
  EXPECT_NE(error_of([&] { parse_file_metadata(f.data(), f.size()); }).find("schema elements, more than the limit"),
            std::string::npos);
}

TEST(ParquetFooterLimits, DecodedSizeIsBudgeted) {
  // 120 row groups of 10,000 empty column chunks each: 1.2 MB of footer, ~170 MB of ColumnChunk structs.
  std::vector<uint8_t> f = {0x49};
  put_struct_list(f, 120);
  for (int g = 0; g < 120; ++g) {
    f.push_back(0x19);  // RowGroup field 1: list
    put_struct_list(f, 10000);
    f.insert(f.end(), 10000, 0x00);
    f.push_back(0x00);  // end of RowGroup
  }
  f.push_back(0x00);
  const std::string e = error_of([&] { parse_file_metadata(f.data(), f.size()); });
  EXPECT_NE(e.find("MiB of metadata"), std::string::npos) << e;
}

TEST(ParquetFooterLimits, FooterLengthIsCappedInTensOfMB) {
  const size_t flen = size_t(kMaxFooterBytes) + 1;
  std::vector<uint8_t> b(flen + 12, 0);
  std::memcpy(b.data(), "PAR1", 4);
  std::memcpy(b.data() + b.size() - 4, "PAR1", 4);
  for (int i = 0; i < 4; ++i) b[b.size() - 8 + i] = uint8_t(flen >> (8 * i));
  const std::string e = error_of([&] { ParquetFile pf(memory_source(b.data(), b.size(), "big.parquet")); });
  EXPECT_EQ(e, "big.parquet: footer of 16777217 bytes, more than the limit of 16777216 (real footers take KBs)");
  EXPECT_LE(kMaxFooterBytes, uint64_t(64) << 20);
}

TEST(ParquetFooterLimits, RowsPerByteAreBounded) {
  // 8 KB of chunk claiming 2M rows (256 per byte): refused before anything is decoded or reserved.
  LeafColumn leaf;
  leaf.name = "caption";
  leaf.type = Type::ByteArray;
  leaf.max_def = 1;
  ColumnMetaData meta;
  meta.type = Type::ByteArray;
  meta.num_values = 2000000;
  std::vector<uint8_t> chunk(8192, 0);
  const std::string e = error_of([&] { decode_column_chunk(chunk.data(), chunk.size(), leaf, meta, 2000000); });
  EXPECT_NE(e.find("row count 2000000 is implausible for a chunk of 8192 bytes"), std::string::npos) << e;
}

}  // namespace
}  // namespace bt::parquet
