// common/atomic_file.h: a write replaces the file whole (a new inode renamed over the old one); a failed write --
// a full disk, simulated with RLIMIT_FSIZE, or a rename that cannot happen -- throws naming the file, leaves no
// temp file behind and the old file as it was.
#include "common/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "error_of.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using bt::test::error_of;

namespace {

using bt::test::TempDir;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

ino_t inode(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_ino;
}

// Only the named files: no temp file left beside them.
void expect_only(const fs::path& dir, const std::set<std::string>& names) {
  std::set<std::string> seen;
  for (const auto& e : fs::directory_iterator(dir)) seen.insert(e.path().filename().string());
  EXPECT_EQ(seen, names);
}

}  // namespace

TEST(AtomicFile, ReplacesTheFileWhole) {
  const TempDir dir("replace");
  const fs::path& d = dir.path;
  bt::write_file_atomic(d / "a.json", "one");
  const ino_t first = inode(d / "a.json");
  bt::write_file_atomic(d / "a.json", std::vector<std::string_view>{"tw", "", "o!"});
  EXPECT_EQ(slurp(d / "a.json"), "two!");
  // A new file renamed over the old one, never the old one rewritten in place: a reader holding the old file
  // open keeps reading the old bytes.
  EXPECT_NE(inode(d / "a.json"), first);
  EXPECT_EQ(bt::atomic_temp_path(d / "a.json"), d / (".tmp-a.json." + std::to_string(getpid())));
  expect_only(d, {"a.json"});
}

TEST(AtomicFile, AFailedWriteLeavesTheOldFileAndNoTempFile) {
  const TempDir dir("full");
  const fs::path& d = dir.path;
  bt::write_file_atomic(d / "model.bin", "old contents");
  // A disk that fills after 16 bytes: write(2) fails with EFBIG past RLIMIT_FSIZE (SIGXFSZ ignored, as a full
  // disk sends none).
  struct rlimit before {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  struct rlimit small = before;
  small.rlim_cur = 16;
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string err = error_of([&] { bt::write_file_atomic(d / "model.bin", std::string(4096, 'x')); });
  setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(err.find((d / "model.bin").string() + ": write failed"), std::string::npos) << err;
  EXPECT_EQ(slurp(d / "model.bin"), "old contents");
  expect_only(d, {"model.bin"});
}

TEST(AtomicFile, AFailedRenameOrCreateLeavesNoTempFile) {
  const TempDir dir("rename");
  const fs::path& d = dir.path;
  fs::create_directories(d / "taken" / "inside");  // a non-empty folder where the file should go
  const std::string err = error_of([&] { bt::write_file_atomic(d / "taken", "x"); });
  EXPECT_NE(err.find("rename into place failed"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_directory(d / "taken" / "inside"));
  expect_only(d, {"taken"});
  EXPECT_NE(error_of([&] { bt::write_file_atomic(d / "missing" / "a.json", "x"); }).find("cannot create"),
            std::string::npos);
}
