// common/process_memory.h: resident memory now and at peak, and a peak that can be restarted between runs.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

#include "common/process_memory.h"

namespace {
constexpr size_t kBlock = 64u << 20;

// Pages mapped and touched directly (no allocator in between: ASan's quarantine would keep freed memory resident).
void* touch_block() {
  void* p = mmap(nullptr, kBlock, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  std::memset(p, 1, kBlock);
  return p;
}
}  // namespace

TEST(ProcessMemory, ResidentAndPeakFollowTouchedPagesAndThePeakRestarts) {
  const uint64_t before = bt::rss_bytes();
  ASSERT_GT(before, 0u) << "/proc/self/status has no VmRSS";
  void* p = touch_block();
  ASSERT_NE(p, nullptr);
  EXPECT_GE(bt::rss_bytes(), before + kBlock * 9 / 10);
  const uint64_t peak = bt::peak_rss_bytes();
  EXPECT_GE(peak, before + kBlock * 9 / 10);
  munmap(p, kBlock);
  EXPECT_GE(bt::peak_rss_bytes(), before + kBlock * 9 / 10) << "the peak outlives the memory";
  if (!bt::reset_peak_rss()) GTEST_SKIP() << "this kernel cannot reset the peak (/proc/self/clear_refs)";
  EXPECT_LT(bt::peak_rss_bytes(), peak - kBlock / 2) << "the reset peak still counts the freed block";
}
