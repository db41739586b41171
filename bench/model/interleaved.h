// The two-sided timing both fused-vs-composite benches use: one warm-up call of each side (allocator, thread pool),
// then `rounds` rounds alternating which side goes first, so drift on a shared machine hits both alike.
#pragma once
#include <algorithm>
#include <utility>
#include <vector>

namespace bt::bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// time_one(fused) -> ms of one call; returns {median fused ms, median composite ms}.
template <typename TimeOne>
std::pair<double, double> interleaved_medians(int rounds, TimeOne&& time_one) {
  time_one(true), time_one(false);
  std::vector<double> fused, composite;
  for (int r = 0; r < rounds; ++r) {
    if (r % 2) {
      fused.push_back(time_one(true));
      composite.push_back(time_one(false));
    } else {
      composite.push_back(time_one(false));
      fused.push_back(time_one(true));
    }
  }
  return {median(fused), median(composite)};
}

}  // namespace bt::bench
