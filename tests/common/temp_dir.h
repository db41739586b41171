// An empty folder for one test, removed when the test ends (passed or not): the helper of this folder's tests
// (included as "temp_dir.h").
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>

namespace bt::test {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("bt_" + name + "_" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace bt::test
