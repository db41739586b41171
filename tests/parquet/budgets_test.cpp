// Budgets before allocation: a few hundred bytes of parquet cannot ask for gigabytes. A dictionary page repeated
// by its indices (an 856-byte file asked for 1.42 GB), row groups sharing one column chunk (816 bytes, 8 groups,
// 1.06 GB) and row counts summed over groups are refused, naming the file.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "parquet/column_chunk.h"
#include "parquet/parquet_file.h"
#include "test_util.h"

namespace bt::parquet {
namespace {

using test::error_of;
using Bytes = std::vector<uint8_t>;

// A minimal Thrift compact protocol writer (structs of i32/i64/binary/list/struct fields).
struct Thrift {
  Bytes b;
  std::vector<int> last{0};
  void varint(uint64_t v) {
    while (v >= 0x80) b.push_back(uint8_t(v | 0x80)), v >>= 7;
    b.push_back(uint8_t(v));
  }
  void field(int id, int type) {
    b.push_back(uint8_t(((id - last.back()) << 4) | type));
    last.back() = id;
  }
  void i32(int id, int64_t v) { field(id, 5), varint(uint64_t((v << 1) ^ (v >> 63))); }
  void i64(int id, int64_t v) { field(id, 6), varint(uint64_t((v << 1) ^ (v >> 63))); }
  void str(int id, const std::string& s) { field(id, 8), varint(s.size()), b.insert(b.end(), s.begin(), s.end()); }
  void begin(int id) { field(id, 12), last.push_back(0); }
  void end() { b.push_back(0), last.pop_back(); }
  void list(int id, int elem_type, size_t n) {
    field(id, 9);
    b.push_back(uint8_t((n < 15 ? n : 15) << 4 | elem_type));
    if (n >= 15) varint(n);
  }
  void elem() { last.push_back(0); }  // a struct inside a list
};

Bytes zlib(const Bytes& in) {
  uLongf n = compressBound(in.size());
  Bytes out(n);
  EXPECT_EQ(compress2(out.data(), &n, in.data(), in.size(), 9), Z_OK);
  out.resize(n);
  return out;
}

// A page: header (type 0 data v1 / 2 dictionary) and a zlib body of `raw`.
Bytes page(int type, const Bytes& raw, int64_t num_values, int encoding) {
  const Bytes body = zlib(raw);
  Thrift t;
  t.i32(1, type);
  t.i32(2, int64_t(raw.size()));
  t.i32(3, int64_t(body.size()));
  t.begin(type == 2 ? 7 : 5);
  t.i32(1, num_values);
  t.i32(2, encoding);
  if (type == 0) t.i32(3, 3), t.i32(4, 3);
  t.end();
  t.b.push_back(0);
  t.b.insert(t.b.end(), body.begin(), body.end());
  return t.b;
}

// A required BYTE_ARRAY chunk: one dictionary value of `value_bytes`, repeated `rows` times by RLE indices.
Bytes dictionary_bomb(size_t value_bytes, size_t rows) {
  Bytes dict(4 + value_bytes, 'x');
  for (int i = 0; i < 4; ++i) dict[i] = uint8_t(value_bytes >> (8 * i));
  Bytes chunk = page(2, dict, 1, 0);
  Bytes idx = {0};  // bit width 0: every index is 0
  for (uint64_t v = uint64_t(rows) << 1; ; v >>= 7) {  // one RLE run of `rows`
    idx.push_back(uint8_t(v >= 0x80 ? (v & 0x7f) | 0x80 : v));
    if (v < 0x80) break;
  }
  const Bytes data = page(0, idx, int64_t(rows), 8);
  chunk.insert(chunk.end(), data.begin(), data.end());
  return chunk;
}

TEST(ParquetBudgets, DictionaryRepeatedPastTheChunkIsRefused) {
  // ~2 KB of chunk: a 1 MiB dictionary value, 200 rows → 200 MiB of values, past the 64 MiB floor.
  const Bytes chunk = dictionary_bomb((size_t(1) << 20) - 4, 200);
  ASSERT_LT(chunk.size(), 4096u);
  LeafColumn leaf;
  leaf.name = "caption";
  leaf.type = Type::ByteArray;
  ColumnMetaData meta;
  meta.type = Type::ByteArray;
  meta.codec = Codec::Gzip;
  meta.num_values = 200;
  const std::string e = error_of([&] { decode_column_chunk(chunk.data(), chunk.size(), leaf, meta, 200); });
  EXPECT_NE(e.find("values decode to more than 67108864 bytes, more than the chunk's size can justify"),
            std::string::npos) << e;
  // 50 rows (50 MiB) fit, and a caller's tighter budget applies too.
  meta.num_values = 50;
  const Bytes ok = dictionary_bomb((size_t(1) << 20) - 4, 50);
  EXPECT_EQ(decode_column_chunk(ok.data(), ok.size(), leaf, meta, 50).data.size(), size_t(50) * ((1 << 20) - 4));
  EXPECT_NE(error_of([&] { decode_column_chunk(ok.data(), ok.size(), leaf, meta, 50, {}, 10 << 20); })
                .find("more than 10485760 bytes"),
            std::string::npos);
}

// A file with one required BYTE_ARRAY column "caption" whose `groups` row groups all point at one chunk (or,
// with `separate`, at copies of it) of `rows` rows each.
Bytes file_with_groups(size_t groups, int64_t rows, bool separate) {
  const Bytes chunk = dictionary_bomb(8, size_t(rows));
  Bytes f = {'P', 'A', 'R', '1'};
  std::vector<int64_t> offsets;
  for (size_t g = 0; g < (separate ? groups : 1); ++g) {
    offsets.push_back(int64_t(f.size()));
    f.insert(f.end(), chunk.begin(), chunk.end());
  }
  Thrift t;
  t.i32(1, 1);
  t.list(2, 12, 2);
  t.elem(), t.str(4, "schema"), t.i32(5, 1), t.end();
  t.elem(), t.i32(1, 6), t.i32(3, 0), t.str(4, "caption"), t.end();
  t.i64(3, rows * int64_t(groups));
  t.list(4, 12, groups);
  for (size_t g = 0; g < groups; ++g) {
    t.elem();
    t.list(1, 12, 1);
    t.elem();
    t.i64(2, offsets[separate ? g : 0]);
    t.begin(3);
    t.i32(1, 6);
    t.list(2, 5, 1), t.varint(0);
    t.list(3, 8, 1), t.varint(7), t.b.insert(t.b.end(), {'c', 'a', 'p', 't', 'i', 'o', 'n'});
    t.i32(4, 2);
    t.i64(5, rows);
    t.i64(6, int64_t(chunk.size()));
    t.i64(7, int64_t(chunk.size()));
    t.i64(9, offsets[separate ? g : 0]);
    t.end();  // ColumnMetaData
    t.end();  // ColumnChunk
    t.i64(2, int64_t(chunk.size()));
    t.i64(3, rows);
    t.end();  // RowGroup
  }
  t.b.push_back(0);  // FileMetaData
  f.insert(f.end(), t.b.begin(), t.b.end());
  for (int i = 0; i < 4; ++i) f.push_back(uint8_t(t.b.size() >> (8 * i)));
  f.insert(f.end(), {'P', 'A', 'R', '1'});
  return f;
}

TEST(ParquetBudgets, RowGroupsSharingAChunkAreRefused) {
  const Bytes shared = file_with_groups(8, 1000, false);
  const std::string e = error_of([&] { ParquetFile pf(memory_source(shared.data(), shared.size(), "s.parquet")); });
  EXPECT_EQ(e.rfind("s.parquet: row group 1, column 'caption' shares bytes 4.. with row group 0, column 'caption'", 0),
            0u) << e;
  // The same groups with their own chunks are fine, and decode.
  const Bytes own = file_with_groups(8, 1000, true);
  ParquetFile pf(memory_source(own.data(), own.size(), "own.parquet"));
  EXPECT_EQ(pf.num_rows(), 8000);
  EXPECT_EQ(pf.read_column(7, 0).bytes(999), "xxxxxxxx");
}

TEST(ParquetBudgets, RowsAreCountedOncePerFile) {
  // 3 groups of 600,000 rows each in separate tiny chunks: every chunk is within its own floor (1M), the file is
  // not (1.8M rows from a few hundred bytes).
  const Bytes f = file_with_groups(3, 600000, true);
  ASSERT_LT(f.size(), 1000u);
  const std::string e = error_of([&] { ParquetFile pf(memory_source(f.data(), f.size(), "r.parquet")); });
  EXPECT_EQ(e.rfind("r.parquet: 1800000 rows is implausible for a file of ", 0), 0u) << e;
}

}  // namespace
}  // namespace bt::parquet
