// The source factory: every kind the CLI accepts opens through source::open_source with the right reader,
// options and epoch order.
#include "source/source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"
#include "parquet/parquet_dataset.h"

namespace bt::source {
namespace {
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "bt_source_test_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

data::SynthOptions small_synth(bool tar) {
  data::SynthOptions s;
  s.n = 12, s.images = 4, s.seed = 3, s.min_width = 40, s.max_width = 60, s.threads = 1, s.tar = tar;
  s.shard_size = 5;
  return s;
}

std::string parquet_fixture() { return std::string(BT_PARQUET_FIXTURES) + "/images_snappy_dict_v1.parquet"; }
SourceOptions parquet_options() {
  SourceOptions o;
  o.caption_column = "image_description";
  return o;
}

// The caption column each format is read with when none is given, decided in one place for every command and the
// Python module: parquet's is image_description (the HF New Yorker set's), other formats' caption.
TEST(Source, EachFormatHasItsDefaultCaptionColumn) {
  EXPECT_EQ(default_caption_column(data::SourceKind::kParquet), "image_description");
  EXPECT_EQ(default_caption_column(data::SourceKind::kCaptions), "caption");
  const Source given = open_source(parquet_fixture(), parquet_options());
  const Source by_default = open_source(parquet_fixture(), SourceOptions{});
  ASSERT_EQ(by_default.dataset->size(), given.dataset->size());
  for (size_t i = 0; i < given.dataset->size(); ++i) EXPECT_EQ(by_default.dataset->caption(i), given.dataset->caption(i));
}

TEST(Source, CaptionsFolderAndFile) {
  TempDir t;
  data::write_synth(t / "cap", small_synth(false));
  Source a = open_source(t / "cap");
  Source b = open_source(t / "cap/captions.jsonl");
  EXPECT_EQ(a.kind, data::SourceKind::kCaptions);
  ASSERT_EQ(a.dataset->size(), 12u);
  ASSERT_EQ(b.dataset->size(), 12u);
  EXPECT_EQ(a.dataset->caption(7), b.dataset->caption(7));
  EXPECT_TRUE(a.row_group_ends.empty());
  EXPECT_EQ(a.shuffle_window_groups, 0u);
}

TEST(Source, TarShards) {
  TempDir t;
  data::write_synth(t / "tar", small_synth(true));
  Source s = open_source(t / "tar");
  EXPECT_EQ(s.kind, data::SourceKind::kShards);
  EXPECT_EQ(s.dataset->size(), 12u);
  EXPECT_TRUE(s.row_group_ends.empty());
}

TEST(Source, CaptionsColumnAndBadRowsFollowOptions) {
  TempDir t;
  fs::create_directories(t / "d");
  std::ofstream(t / "d/captions.jsonl") << "{\"img\": \"a.jpg\", \"text\": \"one\"}\n{\"img\": 3}\n";
  SourceOptions o;
  o.image_column = "img", o.caption_column = "text";
  EXPECT_THROW(open_source(t / "d", o), Error);  // the bad second row stops an kError open
  o.on_bad = data::OnBad::kSkip;
  Source s = open_source(t / "d", o);
  ASSERT_EQ(s.dataset->size(), 2u);
  EXPECT_EQ(s.dataset->caption(0), "one");
  EXPECT_TRUE(s.dataset->is_bad(1));
}

TEST(Source, MissingCaptionsPathNamesTheFlag) {
  SourceOptions o;
  o.flag = "--train_file";
  try {
    open_source("/nonexistent/bt_source_test/captions.jsonl", o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--train_file /nonexistent/bt_source_test/captions.jsonl: no such file"),
              std::string::npos)
        << e.what();
  }
}

TEST(Source, ParquetGetsItsLocalityOrder) {
  Source s = open_source(parquet_fixture(), parquet_options());
  EXPECT_EQ(s.kind, data::SourceKind::kParquet);
  ASSERT_EQ(s.dataset->size(), 11u);
  EXPECT_EQ(s.dataset->caption(0).empty(), false);
  parquet::ParquetDataset ref({parquet_fixture()});
  std::vector<size_t> ends;
  const size_t window = ref.prepare_locality_order(-1, ends);
  EXPECT_EQ(s.row_group_ends, ends);
  EXPECT_EQ(s.shuffle_window_groups, window);
  ASSERT_FALSE(s.row_group_ends.empty());
  EXPECT_EQ(s.row_group_ends.back(), 11u);

  loader::SamplerOptions so;
  s.apply_order(so);
  EXPECT_EQ(so.row_group_ends, ends);
  EXPECT_EQ(so.shuffle_window_groups, window);

  SourceOptions fully_random = parquet_options();
  fully_random.shuffle_window_row_groups = 0;
  EXPECT_EQ(open_source(parquet_fixture(), fully_random).shuffle_window_groups, 0u);
  SourceOptions off = parquet_options();
  off.locality_order = false;
  Source v = open_source(parquet_fixture(), off);
  EXPECT_TRUE(v.row_group_ends.empty());
  EXPECT_EQ(v.shuffle_window_groups, 0u);
}

TEST(Source, MaxRowsKeepsTheFirstRowsAndCutsTheLocalityGroups) {
  Source full = open_source(parquet_fixture(), parquet_options());
  ASSERT_EQ(full.row_group_ends, (std::vector<size_t>{4, 8, 11}));  // row groups of 4
  SourceOptions o = parquet_options();
  o.max_rows = 6;
  Source s = open_source(parquet_fixture(), o);
  ASSERT_EQ(s.dataset->size(), 6u);
  EXPECT_EQ(s.row_group_ends, (std::vector<size_t>{4, 6}));
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(s.dataset->caption(i), full.dataset->caption(i));
    EXPECT_EQ(s.dataset->image_key(i), full.dataset->image_key(i));
  }
  o.max_rows = 100;  // more than there are: all
  EXPECT_EQ(open_source(parquet_fixture(), o).dataset->size(), 11u);
  TempDir t;
  data::write_synth(t / "c", small_synth(false));
  SourceOptions c;
  c.max_rows = 5;
  EXPECT_EQ(open_source(t / "c", c).dataset->size(), 5u);
}

TEST(Source, Synthetic) {
  Source s = open_synthetic(small_synth(false));
  ASSERT_EQ(s.dataset->size(), 12u);
  EXPECT_EQ(s.dataset->image_key(0).rfind("synth:", 0), 0u);
}

}  // namespace
}  // namespace bt::source
