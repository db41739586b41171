// ParquetDataset over the HF-shaped image fixtures: captions, image keys, image bytes, globbing, schema errors,
// and concurrent read_image with a cache small enough to evict.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>

#include "parquet/parquet_dataset.h"
#include "test_util.h"

namespace bt::parquet {
namespace {

using test::error_of;
using test::fixture;

TEST(ParquetDataset, CaptionsKeysAndImagesMatchTheWriter) {
  nlohmann::json want = test::read_json("images.json")["columns"];
  for (const char* f : {"images_snappy_dict_v1.parquet", "images_zstd_plain_v2.parquet"}) {
    ParquetDataset ds({fixture(f)});
    ASSERT_EQ(ds.size(), want["image.bytes"].size());
    std::vector<uint8_t> img;
    for (size_t i = 0; i < ds.size(); ++i) {
      SCOPED_TRACE(ds.describe(i));
      const auto& cap = want["image_description"][i];
      EXPECT_EQ(ds.caption(i), cap.is_null() ? "" : cap.get<std::string>());
      ds.read_image(i, img);
      std::string bytes = test::base64_decode(want["image.bytes"][i].get<std::string>());
      ASSERT_EQ(std::string(img.begin(), img.end()), bytes);
      ASSERT_TRUE((img[0] == 0xff && img[1] == 0xd8) || (img[0] == 0x89 && img[1] == 'P'));  // JPEG or PNG
      const auto& path = want["image.path"][i];
      if (!path.is_null() && !path.get<std::string>().empty()) {
        EXPECT_EQ(ds.image_key(i), path.get<std::string>());
      } else {
        EXPECT_EQ(ds.image_key(i)[0], '#');
      }
    }
    // Rows without a path share a key exactly when their bytes are equal.
    for (size_t i = 0; i < ds.size(); ++i)
      for (size_t j = 0; j < ds.size(); ++j)
        if (ds.image_key(i)[0] == '#' && ds.image_key(j)[0] == '#') {
          EXPECT_EQ(ds.image_key(i) == ds.image_key(j), want["image.bytes"][i] == want["image.bytes"][j]);
        }
  }
}

TEST(ParquetDataset, ExtraColumnsListsAndIntegersAsText) {
  // caption_choices (list<string>) and label (nullable int64) beside the images, without a caption column.
  nlohmann::json want = test::read_json("images.json")["columns"];
  ParquetDatasetOptions o;
  o.caption_column = "";
  o.extra_columns = {"caption_choices", "label"};
  ParquetDataset ds({fixture("images_*_v1.parquet")}, o);  // three files, their rows concatenated in name order
  ASSERT_EQ(ds.size(), 3 * want["label"].size());
  for (size_t i = 0; i < ds.size(); ++i) {
    const size_t row = i % want["label"].size();
    EXPECT_EQ(ds.caption(i), "");
    std::vector<std::string> choices;
    if (row != 4) {  // the fixtures' row 4 has an empty list
      choices = {"choice a" + std::to_string(row), "choice b" + std::to_string(row)};
      if (row % 2 == 0) choices.push_back("choice c" + std::to_string(row));
    }
    EXPECT_EQ(ds.extra(i, 0), choices) << "row " << i;
    const auto& label = want["label"][row];
    EXPECT_EQ(ds.extra(i, 1), label.is_null() ? std::vector<std::string>{}
                                              : std::vector<std::string>{std::to_string(label.get<int64_t>())});
  }
  o.extra_columns = {"no_such_column"};
  EXPECT_NE(error_of([&] { ParquetDataset({fixture("images_gzip_dict_v1.parquet")}, o); })
                .find("column 'no_such_column' not found"),
            std::string::npos);
}

TEST(ParquetDataset, GlobsAreExpandedSortedAndConcatenated) {
  ParquetDataset ds({fixture("images_*_v1.parquet")});
  EXPECT_EQ(ds.size(), 3u * 11u);  // gzip, snappy, uncompressed
  EXPECT_NE(ds.describe(0).find("images_gzip_dict_v1.parquet: row 0 (row group 0"), std::string::npos);
  EXPECT_NE(ds.describe(11 + 5).find("images_snappy_dict_v1.parquet: row 5 (row group 1"), std::string::npos)
      << ds.describe(16);
  EXPECT_EQ(ds.caption(11 + 2), ds.caption(2));
  size_t rows = 0;
  for (const auto& s : ds.row_groups()) rows += s.end - s.begin;
  EXPECT_EQ(rows, ds.size());
  std::vector<std::string> in_folder = ParquetDataset::expand_files({BT_PARQUET_FIXTURES});
  ASSERT_EQ(in_folder.size(), 6u);
  EXPECT_EQ(in_folder[0], fixture("images_gzip_dict_v1.parquet"));
  EXPECT_EQ(in_folder[5], fixture("numbers_snappy_dict_v1.parquet"));
  EXPECT_EQ(error_of([] { ParquetDataset::expand_files({fixture("nothing-*.parquet")}); }),
            "--train_file '" + fixture("nothing-*.parquet") + "' matches no files");
}

TEST(ParquetDataset, RowGroupEndsAndTheWindowThatFitsTheCache) {
  ParquetDataset ds({fixture("images_*_v1.parquet")});
  std::vector<size_t> ends = ds.row_group_ends();
  ASSERT_EQ(ends.size(), ds.row_groups().size());
  ASSERT_GT(ends.size(), 3u);
  EXPECT_EQ(ends.back(), ds.size());
  for (size_t g = 0; g < ends.size(); ++g) {
    EXPECT_EQ(ends[g], ds.row_groups()[g].end);
    EXPECT_GT(ds.row_groups()[g].image_bytes, 0u) << "group " << g;
  }
  EXPECT_EQ(ds.window_groups_fitting_cache(4), 4u) << "256 MB holds these small groups";
  EXPECT_EQ(ds.window_groups_fitting_cache(1000), ends.size()) << "at most every group";
  uint64_t biggest = 0;
  for (const auto& s : ds.row_groups()) biggest = std::max(biggest, s.image_bytes);
  EXPECT_EQ(ds.cache_mb_for_window(1), static_cast<size_t>((biggest + biggest / 4 + (1u << 20) - 1) >> 20));
  EXPECT_GE(ds.cache_mb_for_window(3), ds.cache_mb_for_window(1));
  ParquetDatasetOptions tiny;
  tiny.cache_mb = 0;  // nothing fits: still one group
  EXPECT_EQ(ParquetDataset({fixture("images_*_v1.parquet")}, tiny).window_groups_fitting_cache(4), 1u);
}

TEST(ParquetDataset, PlainBinaryImageColumnAndOtherCaptionColumn) {
  ParquetDatasetOptions o;
  o.image_column = "image.bytes";
  o.caption_column = "image.path";
  ParquetDataset ds({fixture("images_gzip_dict_v1.parquet")}, o);
  EXPECT_EQ(ds.caption(0), "contest_100.jpg");
  EXPECT_EQ(ds.image_key(0).substr(0, 1), "#");  // no path column beside a plain binary column
  EXPECT_EQ(ds.image_key(0), ds.image_key(3));   // rows 0 and 3 hold the same image
  EXPECT_NE(ds.image_key(0), ds.image_key(1));
}

TEST(ParquetDataset, MissingColumnsNameTheAlternatives) {
  ParquetDatasetOptions o;
  o.caption_column = "caption";
  std::string f = fixture("images_gzip_dict_v1.parquet");
  EXPECT_EQ(error_of([&] { ParquetDataset ds({f}, o); }),
            f + ": column 'caption' not found; columns are: image{bytes, path}, image_description, contest_number, "
                "label, is_cartoon, caption_choices{list}");
  o = {};
  o.image_column = "picture";
  EXPECT_NE(error_of([&] { ParquetDataset ds({f}, o); }).find("column 'picture' not found"), std::string::npos);
  o = {};
  o.caption_column = "contest_number";
  EXPECT_NE(error_of([&] { ParquetDataset ds({f}, o); }).find("'contest_number' is not a string column"),
            std::string::npos);
  EXPECT_NE(error_of([] { ParquetDataset ds({fixture("numbers_hyparquet_v2.parquet")}); }).find("column 'image' not found"),
            std::string::npos);
}

TEST(ParquetDataset, RecycledPageBuffersDecodeTheRightBytes) {
  // cache_mb = 0 evicts a page on every new one, so later decodes refill evicted pages' buffers; pages of
  // other files, codecs and sizes in between must not leak bytes into each other.
  nlohmann::json want = test::read_json("images.json")["columns"]["image.bytes"];
  ParquetDatasetOptions o;
  o.cache_mb = 0;
  ParquetDataset ds({fixture("images_zstd_plain_v2.parquet"), fixture("images_snappy_dict_v1.parquet"),
                     fixture("images_uncompressed_v1.parquet")},
                    o);
  const size_t n = want.size();
  ASSERT_EQ(ds.size(), 3 * n);
  std::vector<uint8_t> img;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t k = 0; k < ds.size(); ++k) {
      const size_t i = pass ? (k * 7) % ds.size() : ds.size() - 1 - k;
      SCOPED_TRACE(ds.describe(i));
      ds.read_image(i, img);
      const auto& w = want[i % n];
      if (w.is_null()) continue;
      ASSERT_EQ(std::string(img.begin(), img.end()), test::base64_decode(w.get<std::string>()));
    }
}

TEST(ParquetDataset, ConcurrentReadsWithEviction) {
  ParquetDatasetOptions o;
  o.cache_mb = 0;  // keep only the most recent group: every thread keeps evicting the others'
  ParquetDataset ds({fixture("images_snappy_dict_v1.parquet"), fixture("images_uncompressed_v1.parquet")}, o);
  std::vector<std::string> expect(ds.size());
  std::vector<uint8_t> b;
  for (size_t i = 0; i < ds.size(); ++i) {
    ds.read_image(i, b);
    expect[i].assign(b.begin(), b.end());
  }
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      std::vector<uint8_t> img;
      for (size_t k = 0; k < 400; ++k) {
        size_t i = (k * 7 + t * 5) % ds.size();
        ds.read_image(i, img);
        if (std::string(img.begin(), img.end()) != expect[i]) ++bad;
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_THROW(ds.read_image(ds.size(), b), Error);
}

}  // namespace
}  // namespace bt::parquet
