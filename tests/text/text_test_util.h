// Helpers for the text tests: fixture paths, temporary directories, gzip'd fixture files.
#pragma once
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

#include "text/tokenizer.h"

namespace bt::text::test {

inline std::string fixture(const std::string& rel) { return std::string(BT_TEXT_FIXTURES) + "/" + rel; }

inline bt::text::Tokenizer tiny() {
  return bt::text::Tokenizer::from_files(fixture("tiny/vocab.json"), fixture("tiny/merges.txt"));
}

// A fresh directory under the system temp dir, removed when the object dies.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / ("bt_text_" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name, const std::string& bytes) const {
    std::string p = (path / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
};

inline std::string gunzip_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path);
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  gzclose(f);
  if (n < 0) throw std::runtime_error("gzip error in " + path);
  return out;
}

}  // namespace bt::text::test
