// Issue 53, item 1, through the source factory: a pipe: value that comes out of a file -- a dataset card's
// data_files, a parquet file's image paths -- or that nobody typed is never run (data/user_command.h). Each case
// holds a canary command (it would create a file); the file must not exist afterwards.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../common/error_of.h"
#include "hub/dataset_files.h"
#include "source/mixed_source.h"
#include "source/source.h"

namespace bt::source {
namespace {
namespace fs = std::filesystem;
using bt::test::error_of;

class SourceCommandGuard : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "bt_source_guard_XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
  }
  void TearDown() override {
    fs::current_path(was_);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_, was_ = fs::current_path();
};

TEST_F(SourceCommandGuard, ADatasetCardsDataFilesAreAPathInTheRepository) {
  const fs::path repo = dir_ / "repo", canary = dir_ / "canary";
  fs::create_directories(repo);
  std::ofstream(repo / "README.md") << "---\nconfigs:\n- config_name: c\n  data_files:\n  - split: train\n"
                                    << "    path: \"pipe:touch " << canary.string() << "\"\n---\n";
  const std::string pattern = hub::dataset_split_pattern(repo.string(), "c", "train");
  EXPECT_EQ(pattern.rfind(repo.string() + "/", 0), 0u) << pattern;  // inside the repository: a file name
  const std::string e = error_of([&] { open_source(pattern, source_options({}, "--dataset_name")); });
  EXPECT_NE(e.find("no such file or folder"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(canary));
}

TEST_F(SourceCommandGuard, AParquetImagePathIsAKeyNeverACommand) {
  // The fixture with one image's path rewritten in place (same length) to a command: "pipe:touch cnry".
  std::ifstream in(std::string(BT_PARQUET_FIXTURES) + "/images_uncompressed_v1.parquet", std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  for (size_t at; (at = bytes.find("contest_100.jpg")) != std::string::npos;) bytes.replace(at, 15, "pipe:touch cnry");
  std::ofstream(dir_ / "doctored.parquet", std::ios::binary) << bytes;
  fs::current_path(dir_);  // the command would touch ./cnry
  const Source s = open_source("doctored.parquet", source_options({}, "--data"));
  bool found = false;
  std::vector<uint8_t> image;
  for (size_t i = 0; i < s.dataset->size(); ++i) {
    found |= s.dataset->image_key(i) == "pipe:touch cnry";
    s.dataset->read_image(i, image);
  }
  EXPECT_TRUE(found);
  EXPECT_FALSE(fs::exists(dir_ / "cnry"));
}

TEST_F(SourceCommandGuard, ACommandNobodyTypedIsRefusedInEveryEntryPoint) {
  const std::string cmd = "pipe:touch " + (dir_ / "canary").string();
  for (const auto& e : {error_of([&] { open_source(cmd); }),
                        error_of([&] { open_mixed({cmd, cmd}, {}); })})
    EXPECT_NE(e.find("runs only when you type it"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(dir_ / "canary"));
}

}  // namespace
}  // namespace bt::source
