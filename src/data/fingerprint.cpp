#include "data/fingerprint.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace bt::data {

namespace {

// FNV-1a 64 over `text_of(row)` for up to 256 rows spread evenly over the dataset, as 16 hex digits.
template <class TextOf>
std::string sampled_hash(const Dataset& ds, TextOf text_of) {
  constexpr size_t kSampled = 256;
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](unsigned char c) { h = (h ^ c) * 1099511628211ull; };
  const size_t n = ds.size(), count = std::min(n, kSampled);
  for (size_t k = 0; k < count; ++k) {
    const size_t row = count == n ? k : k * n / count;
    for (unsigned char c : text_of(row)) mix(c);
    mix(0);  // a row boundary: "ab","c" differs from "a","bc"
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace

std::string fingerprint(const Dataset& ds) {
  return std::to_string(ds.size()) + " rows, captions " +
         sampled_hash(ds, [&ds](size_t row) -> const std::string& { return ds.caption(row); });
}

std::string image_fingerprint(const Dataset& ds) {
  return "images " + sampled_hash(ds, [&ds](size_t row) {
           const std::string& key = ds.image_key(row);
           const size_t slash = key.find_last_of('/');
           return slash == std::string::npos ? key : key.substr(slash + 1);
         });
}

}  // namespace bt::data
