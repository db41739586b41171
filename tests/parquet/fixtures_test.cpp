// Every value of every fixture (written by parquet-wasm / hyparquet-writer, see scripts/fixtures/parquet/)
// compared against the JSON the writing script emitted: dictionary and plain pages, SNAPPY/ZSTD/GZIP/none,
// data page v1 and v2, nulls, several row groups and pages, nested struct columns.
#include <gtest/gtest.h>

#include "parquet/parquet_file.h"
#include "test_util.h"

namespace bt::parquet {
namespace {

using test::fixture;

struct Case {
  const char* file;
  const char* expected;
  Codec codec;
  size_t row_groups;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.file; }

class ParquetFixture : public ::testing::TestWithParam<Case> {};

TEST_P(ParquetFixture, EveryValueMatchesTheWriter) {
  const Case& c = GetParam();
  ParquetFile pf = ParquetFile::open(fixture(c.file));
  nlohmann::json want = test::read_json(c.expected);
  ASSERT_EQ(pf.num_rows(), want["num_rows"].get<int64_t>());
  EXPECT_EQ(pf.num_row_groups(), c.row_groups);
  size_t checked = 0;
  for (auto& [name, values] : want["columns"].items()) {
    int leaf = pf.find_column(name);
    ASSERT_GE(leaf, 0) << name << " in " << pf.describe_columns();
    EXPECT_EQ(pf.metadata().row_groups[0].columns[leaf].meta.codec, c.codec);
    size_t row = 0;
    for (size_t g = 0; g < pf.num_row_groups(); ++g) {
      ColumnValues v = pf.read_column(g, static_cast<size_t>(leaf));
      ASSERT_EQ(v.num_rows, static_cast<size_t>(pf.row_group_rows(g)));
      for (size_t r = 0; r < v.num_rows; ++r, ++row) {
        const nlohmann::json& w = values.at(row);
        SCOPED_TRACE(testing::Message() << c.file << " column " << name << " row " << row);
        ASSERT_EQ(v.present[r] != 0, !w.is_null());
        if (w.is_null()) continue;
        if (w.is_string()) {
          std::string expect = name == "image.bytes" ? test::base64_decode(w.get<std::string>()) : w.get<std::string>();
          ASSERT_EQ(std::string(v.bytes(r)), expect);
        } else if (w.is_boolean()) {
          ASSERT_EQ(v.ints[r], w.get<bool>() ? 1 : 0);
        } else {
          ASSERT_EQ(v.ints[r], w.get<int64_t>());
        }
        ++checked;
      }
    }
    EXPECT_EQ(row, values.size());
  }
  EXPECT_GT(checked, 50u);
}

INSTANTIATE_TEST_SUITE_P(
    Writers, ParquetFixture,
    ::testing::Values(Case{"images_snappy_dict_v1.parquet", "images.json", Codec::Snappy, 3},
                      Case{"images_zstd_plain_v2.parquet", "images.json", Codec::Zstd, 2},
                      Case{"images_gzip_dict_v1.parquet", "images.json", Codec::Gzip, 1},
                      Case{"images_uncompressed_v1.parquet", "images.json", Codec::Uncompressed, 3},
                      Case{"numbers_snappy_dict_v1.parquet", "numbers.json", Codec::Snappy, 3},
                      Case{"numbers_hyparquet_v2.parquet", "numbers.json", Codec::Snappy, 3}),
    [](const auto& info) {
      std::string s = info.param.file;
      return s.substr(0, s.find('.'));
    });

TEST(ParquetFile, SchemaOfTheImageTable) {
  ParquetFile pf = ParquetFile::open(fixture("images_snappy_dict_v1.parquet"));
  EXPECT_EQ(pf.describe_columns(),
            "image{bytes, path}, image_description, contest_number, label, is_cartoon, caption_choices{list}");
  const LeafColumn& bytes = pf.schema().leaves[pf.find_column("image.bytes")];
  EXPECT_EQ(bytes.max_def, 2);
  EXPECT_EQ(bytes.max_rep, 0);
  EXPECT_FALSE(bytes.is_string);
  EXPECT_TRUE(pf.schema().leaves[pf.find_column("image.path")].is_string);
  const LeafColumn& list = pf.schema().leaves[pf.find_column("caption_choices.list.item")];
  EXPECT_EQ(list.max_rep, 1);
  EXPECT_EQ(pf.find_column("image"), -1);
}

TEST(ParquetFile, ListOfStringColumnsReadAsPerRowLists) {
  // The fixtures' caption_choices (list<string>, as the HF contest data's): row i holds "choice a<i>",
  // "choice b<i>" and, for even i, "choice c<i>"; row 4's list is empty. Every writer variant (dictionary and
  // plain, v1 and v2 pages, each codec) and every row-group split must read the same.
  for (const char* name : {"images_gzip_dict_v1.parquet", "images_snappy_dict_v1.parquet",
                           "images_uncompressed_v1.parquet", "images_zstd_plain_v2.parquet"}) {
    ParquetFile pf = ParquetFile::open(fixture(name));
    const int leaf = pf.find_column("caption_choices.list.item");
    ASSERT_GE(leaf, 0);
    size_t row = 0;
    for (size_t g = 0; g < pf.num_row_groups(); ++g) {
      ColumnValues v = pf.read_column(g, static_cast<size_t>(leaf));
      ASSERT_EQ(v.num_rows, size_t(pf.row_group_rows(g)));
      ASSERT_EQ(v.list_begin.size(), v.num_rows + 1) << name;
      for (size_t r = 0; r < v.num_rows; ++r, ++row) {
        std::vector<std::string> got, want;
        for (uint64_t e = v.list_begin[r]; e < v.list_begin[r + 1]; ++e) {
          ASSERT_TRUE(v.present[e]) << name << " row " << row;
          got.emplace_back(v.bytes(e));
        }
        if (row != 4) {
          want = {"choice a" + std::to_string(row), "choice b" + std::to_string(row)};
          if (row % 2 == 0) want.push_back("choice c" + std::to_string(row));
        }
        EXPECT_EQ(got, want) << name << " row " << row;
      }
    }
    EXPECT_EQ(row, 11u) << name;
  }
}

// Page-level random access must give the same rows as decoding the whole chunk, for dictionary pages, plain
// fallback pages inside one chunk (numbers_snappy_dict_v1's 'words'), v2 pages and RLE booleans.
TEST(ParquetFile, SinglePagesDecodeLikeTheWholeChunk) {
  for (const char* f : {"numbers_snappy_dict_v1.parquet", "numbers_hyparquet_v2.parquet", "images_zstd_plain_v2.parquet"}) {
    ParquetFile pf = ParquetFile::open(fixture(f));
    size_t multi_page_chunks = 0;
    for (size_t g = 0; g < pf.num_row_groups(); ++g)
      for (size_t c = 0; c < pf.schema().leaves.size(); ++c) {
        if (pf.schema().leaves[c].max_rep) continue;
        ColumnValues whole = pf.read_column(g, c);
        auto locs = pf.page_locations(g, c);
        size_t data_pages = 0, next_row = 0;
        for (size_t p = 0; p < locs.size(); ++p) {
          if (locs[p].dictionary) continue;
          ++data_pages;
          ASSERT_EQ(locs[p].first_row, next_row);
          next_row += locs[p].num_rows;
          ColumnValues part = pf.read_pages(g, c, locs, p, p);
          ASSERT_EQ(part.num_rows, locs[p].num_rows);
          for (size_t r = 0; r < part.num_rows; ++r) {
            size_t w = locs[p].first_row + r;
            SCOPED_TRACE(testing::Message() << f << " group " << g << " column " << c << " row " << w);
            ASSERT_EQ(part.present[r], whole.present[w]);
            if (part.type == Type::ByteArray) ASSERT_EQ(part.bytes(r), whole.bytes(w));
            else ASSERT_EQ(part.ints[r], whole.ints[w]);
          }
        }
        EXPECT_EQ(next_row, whole.num_rows);
        multi_page_chunks += data_pages > 1;
      }
    EXPECT_GT(multi_page_chunks, 0u) << f;
  }
}

}  // namespace
}  // namespace bt::parquet
