// Dataset repositories' parquet files per config and split, as the datasets library lays them out.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "hub/dataset_files.h"

namespace fs = std::filesystem;
using bt::hub::dataset_split_pattern;

namespace {

struct Repo {
  fs::path root = fs::temp_directory_path() / ("bt_dataset_files_" + std::to_string(getpid()));
  Repo() {
    fs::remove_all(root);
    for (const char* f : {"matching/train-00000-of-00002.parquet", "matching/train-00001-of-00002.parquet",
                          "matching/validation-00000-of-00001.parquet", "matching/test-00000-of-00001.parquet",
                          "ranking/train/0000.parquet", "data/test-00000-of-00001.parquet", "README.md"}) {
      fs::create_directories((root / f).parent_path());
      std::ofstream(root / f) << "x";
    }
  }
  ~Repo() { fs::remove_all(root); }
};

std::string error_of(const Repo& r, const std::string& config, const std::string& split) {
  try {
    dataset_split_pattern(r.root.string(), config, split);
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(DatasetFiles, ConfigSplitLayouts) {
  Repo r;
  EXPECT_EQ(dataset_split_pattern(r.root.string(), "matching", "train"), (r.root / "matching/train-*.parquet").string());
  EXPECT_EQ(dataset_split_pattern(r.root.string(), "matching", "test"), (r.root / "matching/test-*.parquet").string());
  EXPECT_EQ(dataset_split_pattern(r.root.string(), "ranking", "train"), (r.root / "ranking/train/*.parquet").string());
  EXPECT_EQ(dataset_split_pattern(r.root.string(), "default", "test"), (r.root / "data/test-*.parquet").string());
}

TEST(DatasetFiles, UnknownConfigOrSplitListsWhatExists) {
  Repo r;
  EXPECT_NE(error_of(r, "explanation", "train").find("no such config (configs: default, matching, ranking)"),
            std::string::npos)
      << error_of(r, "explanation", "train");
  EXPECT_NE(error_of(r, "matching", "dev").find("no such split (splits: test, train, validation)"), std::string::npos)
      << error_of(r, "matching", "dev");
}

TEST(DatasetFiles, TheCardsConfigsWinOverTheLayout) {
  // The contest's README.md declares its configs (and a dataset_info block with config_name keys of its own).
  Repo r;
  std::ofstream(r.root / "README.md") << "---\n"
                                         "license: cc-by-4.0\n"
                                         "dataset_info:\n"
                                         "- config_name: ignored\n"
                                         "  features:\n"
                                         "  - name: image\n"
                                         "configs:\n"
                                         "- config_name: matching\n"
                                         "  data_files:\n"
                                         "  - split: train\n"
                                         "    path: matching/train-*\n"
                                         "  - split: validation\n"
                                         "    path:\n"
                                         "    - \"matching/validation-*\"\n"
                                         "- config_name: ranked\n"
                                         "  default: true\n"
                                         "  data_files: ranking/train/*.parquet\n"
                                         "---\n"
                                         "# The New Yorker caption contest\n";
  EXPECT_EQ(dataset_split_pattern(r.root.string(), "matching", "train"), (r.root / "matching/train-*.parquet").string());
  EXPECT_EQ(dataset_split_pattern(r.root.string(), "matching", "validation"),
            (r.root / "matching/validation-*.parquet").string());
  EXPECT_EQ(dataset_split_pattern(r.root.string(), "", "train"), (r.root / "ranking/train/*.parquet").string());
  EXPECT_NE(error_of(r, "matching", "test").find("no such split (splits in its README.md: train, validation)"),
            std::string::npos)
      << error_of(r, "matching", "test");
  EXPECT_NE(error_of(r, "ignored", "train").find("configs in its README.md: matching, ranked"), std::string::npos)
      << error_of(r, "ignored", "train");
}

TEST(DatasetFiles, CardPathsOutsideTheRepositoryAreRefused) {
  for (const char* path : {"../outside/secret.parquet", "/etc/secret.parquet", "matching/../../x/*.parquet"}) {
    Repo r;
    std::ofstream(r.root / "README.md") << "---\nconfigs:\n- config_name: matching\n  data_files:\n  - split: train\n"
                                        << "    path: " << path << "\n---\n";
    const std::string e = error_of(r, "matching", "train");
    EXPECT_NE(e.find("README.md: data_files of config 'matching' split train points outside the dataset's folder"),
              std::string::npos)
        << path << ": " << e;
  }
}
