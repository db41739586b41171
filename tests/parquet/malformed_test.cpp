// Corrupted fixtures: every truncation and many byte flips must give a bt::Error naming the file (or succeed
// with some values), never a crash or hang. The sanitizer builds make "never a crash" strict.
#include <gtest/gtest.h>

#include "parquet/parquet_dataset.h"
#include "test_util.h"

namespace bt::parquet {
namespace {

// Opens the bytes and reads every flat column; returns the error text or "".
std::string read_everything(const std::vector<uint8_t>& bytes) {
  try {
    ParquetFile pf(memory_source(bytes.data(), bytes.size(), "bad.parquet"));
    for (size_t g = 0; g < pf.num_row_groups(); ++g)
      for (size_t c = 0; c < pf.schema().leaves.size(); ++c)
        if (pf.schema().leaves[c].max_rep == 0) pf.read_column(g, c);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ParquetMalformed, TruncationsAndFlipsGiveErrorsNamingTheFile) {
  for (const char* f : {"images_snappy_dict_v1.parquet", "numbers_hyparquet_v2.parquet", "images_zstd_plain_v2.parquet"}) {
    const std::vector<uint8_t> good = test::read_all(test::fixture(f));
    ASSERT_GT(good.size(), 1000u);
    EXPECT_EQ(read_everything(good), "");
    for (size_t n : {size_t(0), size_t(7), size_t(12), good.size() / 2, good.size() - 9, good.size() - 1}) {
      std::vector<uint8_t> t(good.begin(), good.begin() + n);
      std::string e = read_everything(t);
      EXPECT_EQ(e.rfind("bad.parquet: ", 0), 0u) << n << ": " << e;
    }
    size_t errors = 0;
    uint32_t seed = 12345;
    for (int k = 0; k < 600; ++k) {
      std::vector<uint8_t> b = good;
      seed = seed * 1664525u + 1013904223u;
      size_t at = seed % b.size();
      b[at] ^= static_cast<uint8_t>(1u << ((seed >> 24) & 7));
      std::string e = read_everything(b);
      if (!e.empty()) {
        ++errors;
        EXPECT_EQ(e.rfind("bad.parquet: ", 0), 0u) << e;
      }
    }
    EXPECT_GT(errors, 0u);
  }
}

TEST(ParquetMalformed, ChunkErrorsNameRowGroupAndColumn) {
  std::vector<uint8_t> b = test::read_all(test::fixture("images_uncompressed_v1.parquet"));
  // The first chunk (image.bytes of row group 0) starts right after the magic: break its page header.
  b[4] = 0xff;
  b[5] = 0xff;
  std::string e = read_everything(b);
  EXPECT_EQ(e.rfind("bad.parquet: row group 0, column 'image.bytes': ", 0), 0u) << e;
  std::vector<uint8_t> junk(100, 'x');
  EXPECT_EQ(read_everything(junk), "bad.parquet: not a parquet file (no PAR1 magic)");
}

}  // namespace
}  // namespace bt::parquet
