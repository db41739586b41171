// common/process_memory.h: resident memory now and at peak, and a peak that can be restarted between runs.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "common/process_memory.h"
#include "common/runtime.h"
#include "sanitizers.h"

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

namespace {
// Page faults taken while a 64 MB block is allocated, written and freed again right after the same was done once.
long faults_to_reuse_a_freed_block() {
  auto use_block = [] {
    auto* p = static_cast<char*>(std::malloc(kBlock));
    if (!p) return;
    std::memset(p, 2, kBlock);
    asm volatile("" : : "r"(p) : "memory");  // the block escapes: the compiler may not elide it
    std::free(p);
  };
  use_block();
  const long before = bt::minor_page_faults();
  use_block();
  return bt::minor_page_faults() - before;
}
}  // namespace

TEST(ProcessMemory, FreedLargeBlocksAreReusedWithoutPageFaults) {
#if BT_TEST_REPLACED_MALLOC
  GTEST_SKIP() << "not glibc's malloc (a sanitizer's allocator replaces it)";
#else
  {
    bt::RuntimeSwitches off;
    off.keep_freed_memory = false;  // the switch: glibc as it is, a fresh mapping per big block
    const bt::ScopedRuntimeSwitches scope(off);
    bt::keep_freed_memory_for_reuse();
    EXPECT_GT(faults_to_reuse_a_freed_block(), 1000) << "glibc's default no longer maps big blocks afresh?";
  }
  bt::keep_freed_memory_for_reuse();
  EXPECT_LT(faults_to_reuse_a_freed_block(), 100) << "a freed 64 MB block was given back to the kernel";
#endif
}
