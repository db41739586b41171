// The peak resident memory a call adds: the tests' check that a hostile input is refused before it is allocated
// (common/process_memory.h). 0 where the kernel cannot reset the high-water mark (/proc/self/clear_refs).
#pragma once
#include <cstdint>
#include <functional>

#include "common/process_memory.h"

namespace bt::test {

inline uint64_t peak_growth(const std::function<void()>& f) {
  bt::release_free_memory();  // freed memory handed back first, so the peak counts what f takes
  if (!bt::reset_peak_rss()) return 0;
  const uint64_t before = bt::rss_bytes();
  f();
  const uint64_t peak = bt::peak_rss_bytes();
  return peak > before ? peak - before : 0;
}

}  // namespace bt::test
