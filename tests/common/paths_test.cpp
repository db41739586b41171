// Filesystem problems as one line naming the path and the fix (common/paths.h): links that loop or lead nowhere,
// a file where the output folder belongs; never libstdc++'s raw "filesystem error:" text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/paths.h"
#include "error_of.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using bt::test::error_of;
using bt::test::TempDir;

TEST(Paths, NamesBrokenLinks) {
  const TempDir dir("paths_links");
  fs::create_symlink(dir.path / "nowhere", dir.path / "dangling");
  fs::create_symlink(dir.path / "loop", dir.path / "loop");
  EXPECT_NE(bt::broken_link_problem(dir.path / "dangling").find("which does not exist"), std::string::npos);
  EXPECT_NE(bt::broken_link_problem(dir.path / "loop").find("symbolic link loop"), std::string::npos);
  EXPECT_EQ(bt::broken_link_problem(dir.path), "");  // a folder is not a link
}

TEST(Paths, OutputFolderIsMadeOrRefusedInOneLine) {
  const TempDir dir("paths_out");
  bt::make_output_folder(dir.path / "a" / "b", "--output_dir");
  EXPECT_TRUE(fs::is_directory(dir.path / "a" / "b"));
  fs::create_symlink(dir.path / "nowhere" / "deeper", dir.path / "dangling");
  fs::create_symlink(dir.path / "loop", dir.path / "loop");
  std::ofstream(dir.path / "file") << "x";
  for (const auto& [where, want] : {std::pair{dir.path / "dangling", "which does not exist"},
                                    {dir.path / "dangling" / "sub", "which does not exist"},
                                    {dir.path / "loop", "symbolic link loop"},
                                    {dir.path / "loop" / "sub", "symbolic link loop"},
                                    {dir.path / "file", "not a folder"}}) {
    const fs::path& path = where;  // a lambda may not capture a structured binding before clang 16
    const std::string e = error_of([&] { bt::make_output_folder(path, "--output_dir"); });
    EXPECT_EQ(e.rfind("--output_dir " + path.string() + ": ", 0), 0u) << e;
    EXPECT_NE(e.find(want), std::string::npos) << e;
    EXPECT_EQ(e.find("filesystem error"), std::string::npos) << e;
  }
}

TEST(Paths, FilesystemErrorLineNamesThePathFirst) {
  const TempDir dir("paths_fserr");
  fs::create_symlink(dir.path / "loop", dir.path / "loop");
  try {
    (void)fs::status(dir.path / "loop");
    FAIL() << "no filesystem_error";
  } catch (const fs::filesystem_error& e) {
    EXPECT_EQ(bt::filesystem_error_line(e), (dir.path / "loop").string() + ": a symbolic link loop (fix or remove the link)");
  }
}
