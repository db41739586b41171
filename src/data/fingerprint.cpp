#include "data/fingerprint.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace bt::data {

std::string fingerprint(const Dataset& ds) {
  constexpr size_t kSampled = 256;
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  auto mix = [&h](unsigned char c) { h = (h ^ c) * 1099511628211ull; };
  const size_t n = ds.size(), count = std::min(n, kSampled);
  for (size_t k = 0; k < count; ++k) {
    const size_t row = count == n ? k : k * n / count;
    for (unsigned char c : ds.caption(row)) mix(c);
    mix(0);  // a row boundary: "ab","c" differs from "a","bc"
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::to_string(n) + " rows, captions " + hex;
}

}  // namespace bt::data
