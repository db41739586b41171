#include "hub/hub.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/error.h"

namespace fs = std::filesystem;
using bt::hub::RepoType;

namespace {

const char* kCommit = "0123456789abcdef0123456789abcdef01234567";

// A fake cache: models--org--tiny with refs/main -> snapshots/<kCommit>, datasets--org--set likewise.
class HubCache : public ::testing::Test {
 protected:
  void SetUp() override {
    root = fs::temp_directory_path() / ("bt_hub_test_" + std::to_string(::getpid()));
    fs::remove_all(root);
    for (const char* repo : {"models--org--tiny", "datasets--org--set"}) {
      fs::create_directories(root / "hub" / repo / "refs");
      fs::create_directories(root / "hub" / repo / "snapshots" / kCommit);
      std::ofstream(root / "hub" / repo / "refs" / "main") << kCommit;  // no newline, as huggingface_hub writes
    }
    for (const char* v : {"HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"}) ::unsetenv(v);
  }
  void TearDown() override {
    for (const char* v : {"HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"}) ::unsetenv(v);
    fs::remove_all(root);
  }
  fs::path root;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_F(HubCache, RootFollowsTheEnvironmentInHuggingfaceHubsOrder) {
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(bt::hub::cache_root(), "/home/u/.cache/huggingface/hub");
  ::setenv("XDG_CACHE_HOME", "/x", 1);
  EXPECT_EQ(bt::hub::cache_root(), "/x/huggingface/hub");
  ::setenv("HF_HOME", "/h", 1);
  EXPECT_EQ(bt::hub::cache_root(), "/h/hub");
  ::setenv("HF_HUB_CACHE", "~/c", 1);
  EXPECT_EQ(bt::hub::cache_root(), "/home/u/c");
  EXPECT_EQ(bt::hub::cache_root("/explicit"), "/explicit");
}

TEST_F(HubCache, ResolvesRefsAndCommitsToSnapshots) {
  ::setenv("HF_HOME", root.c_str(), 1);
  const std::string snap = (root / "hub" / "models--org--tiny" / "snapshots" / kCommit).string();
  EXPECT_EQ(bt::hub::resolve("org/tiny"), snap);
  EXPECT_EQ(bt::hub::resolve("org/tiny", RepoType::Model, kCommit), snap);
  EXPECT_EQ(bt::hub::resolve("org/set", RepoType::Dataset),
            (root / "hub" / "datasets--org--set" / "snapshots" / kCommit).string());
  ::unsetenv("HF_HOME");
  EXPECT_EQ(bt::hub::resolve("org/tiny", RepoType::Model, "main", (root / "hub").string()), snap);
}

TEST_F(HubCache, LocalFoldersWin) {
  ::setenv("HF_HOME", root.c_str(), 1);
  EXPECT_EQ(bt::hub::resolve(root.string()), root.string());
}

TEST_F(HubCache, MissingThingsNameWhereItLookedAndTheDownloadCommand) {
  ::setenv("HF_HUB_CACHE", (root / "hub").c_str(), 1);
  std::string e = error_of([] { bt::hub::resolve("org/absent"); });
  EXPECT_NE(e.find("models--org--absent"), std::string::npos) << e;
  EXPECT_NE(e.find("huggingface-cli download org/absent"), std::string::npos) << e;
  e = error_of([] { bt::hub::resolve("org/tiny", RepoType::Model, "v2"); });
  EXPECT_NE(e.find("refs/v2"), std::string::npos) << e;
  EXPECT_NE(e.find("--revision v2"), std::string::npos) << e;
  e = error_of([] { bt::hub::resolve("org/tiny", RepoType::Model, "ffffffffffffffffffffffffffffffffffffffff"); });
  EXPECT_NE(e.find("snapshots/ffff"), std::string::npos) << e;
  e = error_of([] { bt::hub::resolve("org/set", RepoType::Model); });
  EXPECT_NE(e.find("models--org--set"), std::string::npos) << e;
  e = error_of([] { bt::hub::resolve("org/absent", RepoType::Dataset); });
  EXPECT_NE(e.find("--repo-type dataset org/absent"), std::string::npos) << e;
  e = error_of([] { bt::hub::resolve("./no/such/dir"); });
  EXPECT_NE(e.find("no such folder"), std::string::npos) << e;
  std::ofstream(root / "hub" / "models--org--tiny" / "refs" / "bad") << "not-a-hash";
  e = error_of([] { bt::hub::resolve("org/tiny", RepoType::Model, "bad"); });
  EXPECT_NE(e.find("40-hex"), std::string::npos) << e;
}

TEST(HubIds, AcceptsHubNamesOnly) {
  EXPECT_TRUE(bt::hub::is_repo_id("BridgeTower/bridgetower-large-itm-mlm-itc"));
  EXPECT_TRUE(bt::hub::is_repo_id("gpt2"));
  EXPECT_FALSE(bt::hub::is_repo_id("a/b/c"));
  EXPECT_FALSE(bt::hub::is_repo_id("../x"));
  EXPECT_FALSE(bt::hub::is_repo_id("/abs/path"));
  EXPECT_FALSE(bt::hub::is_repo_id("org/.."));
  EXPECT_FALSE(bt::hub::is_repo_id("org/na me"));
  EXPECT_FALSE(bt::hub::is_repo_id(""));
}
