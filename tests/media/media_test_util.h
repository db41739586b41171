// Helpers shared by the media tests: golden-file access and image comparison.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "media/decode.h"

namespace bt::media::testing {

inline std::string golden_path(const std::string& name) { return std::string(BT_MEDIA_GOLDEN_DIR) + "/" + name; }

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << path;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline std::vector<std::vector<std::string>> manifest(const std::string& kind) {
  std::ifstream f(golden_path("manifest.txt"));
  std::vector<std::vector<std::string>> out;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    std::vector<std::string> fields{std::istream_iterator<std::string>(is), std::istream_iterator<std::string>()};
    if (!fields.empty() && fields[0] == kind) out.push_back(fields);
  }
  return out;
}

inline ImageU8 decode_file(const std::string& name, int scale = 8) {
  const auto bytes = read_bytes(golden_path(name));
  ImageU8 img;
  decode_rgb8(bytes, uint64_t{89478485}, img, scale);
  return img;
}

struct Diff {
  size_t n = 0, over1 = 0;
  int max_abs = 0;
  double mean_abs = 0;
};

inline Diff compare(const uint8_t* a, const uint8_t* b, size_t n) {
  Diff d;
  d.n = n;
  uint64_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const int e = std::abs(int(a[i]) - int(b[i]));
    sum += e;
    d.over1 += e > 1;
    if (e > d.max_abs) d.max_abs = e;
  }
  d.mean_abs = n ? double(sum) / n : 0;
  return d;
}

// Rewrites the frame size in a JPEG's SOF0/SOF2 marker (the headers then describe an image its data cannot fill).
inline std::vector<uint8_t> with_jpeg_size(std::vector<uint8_t> b, int w, int h) {
  for (size_t i = 2; i + 9 < b.size(); ++i) {
    if (b[i] == 0xFF && (b[i + 1] == 0xC0 || b[i + 1] == 0xC2)) {
      b[i + 5] = uint8_t(h >> 8), b[i + 6] = uint8_t(h), b[i + 7] = uint8_t(w >> 8), b[i + 8] = uint8_t(w);
      return b;
    }
  }
  ADD_FAILURE() << "no SOF marker";
  return b;
}

}  // namespace bt::media::testing
