// HostBuffer: alignment, the growth policy (headroom, so varying sizes stop allocating), contents kept on
// growth, a caller's allocator used for every block and every block given back, and allocator failures.
#include "common/host_buffer.h"

#include <gtest/gtest.h>

#include <random>

#include "counting_allocator.h"

namespace bt {
namespace {

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % HostBuffer::kAlign == 0; }

TEST(HostBuffer, GrowsWithHeadroomInWholeGranulesAndNeverShrinks) {
  HostBuffer b;
  EXPECT_EQ(b.capacity(), 0u);
  EXPECT_EQ(b.allocations(), 0u);
  b.resize(1000);
  EXPECT_TRUE(aligned(b.data()));
  EXPECT_EQ(b.capacity(), size_t{64} << 10);
  EXPECT_EQ(b.allocations(), 1u);
  b.resize(65536);  // fits the first granule
  EXPECT_EQ(b.allocations(), 1u);
  b.resize(1 << 20);  // 1 MiB + 25% = 1.25 MiB, already whole granules
  EXPECT_EQ(b.capacity(), size_t{1280} << 10);
  EXPECT_EQ(b.allocations(), 2u);
  b.resize((size_t{1280} << 10) - 1);  // within the headroom
  b.resize(10);
  EXPECT_EQ(b.size(), 10u);
  EXPECT_EQ(b.capacity(), size_t{1280} << 10);
  EXPECT_EQ(b.allocations(), 2u);
  EXPECT_EQ(HostBuffer::grown_capacity(0), 0u);
  EXPECT_EQ(HostBuffer::grown_capacity(1), size_t{64} << 10);
  EXPECT_EQ(HostBuffer::grown_capacity(100000), size_t{128} << 10);  // 125000 -> two granules
}

TEST(HostBuffer, GrowthKeepsContents) {
  HostBuffer b;
  b.resize(70000);
  for (size_t i = 0; i < b.size(); ++i) b.data()[i] = static_cast<uint8_t>(i * 7);
  b.resize(5 << 20);
  ASSERT_EQ(b.allocations(), 2u);
  EXPECT_TRUE(aligned(b.data()));
  for (size_t i = 0; i < 70000; ++i) ASSERT_EQ(b.data()[i], static_cast<uint8_t>(i * 7)) << i;
}

// Batch sizes within +-10% of 3 MB, as a loader's packed batches vary: after the first growths none allocate.
TEST(HostBuffer, VaryingSizesStopAllocatingAfterTheFirstFew) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<size_t> size(2700000, 3300000);
  HostBuffer b;
  for (int i = 0; i < 20; ++i) b.resize(size(rng));
  const size_t warm = b.allocations();
  EXPECT_LE(warm, 2u);
  for (int i = 0; i < 1000; ++i) b.resize(size(rng));
  EXPECT_EQ(b.allocations(), warm) << "steady-state resizes allocated";
}

TEST(HostBuffer, CallersAllocatorHoldsEveryBlockAndGetsEachBack) {
  test::CountingAllocator counting;
  {
    HostBuffer b(counting.get());
    EXPECT_STREQ(b.allocator().name, "counting");
    b.resize(100);
    EXPECT_TRUE(counting.owns(b.data(), b.capacity()));
    b.resize(300000);
    EXPECT_TRUE(counting.owns(b.data(), b.capacity()));
    EXPECT_EQ(counting.allocations(), 2u);
    EXPECT_EQ(b.allocations(), 2u);
    EXPECT_EQ(counting.releases(), 1u);  // the first block, on growth

    HostBuffer moved(std::move(b));  // the block travels with its allocator
    EXPECT_EQ(b.data(), nullptr);
    EXPECT_EQ(b.capacity(), 0u);
    EXPECT_TRUE(counting.owns(moved.data(), moved.size()));
    b.resize(10);  // the moved-from buffer is back on the default allocator
    EXPECT_STREQ(b.allocator().name, "aligned_alloc");
    EXPECT_EQ(counting.allocations(), 2u);

    HostBuffer other(counting.get());
    other.resize(1);
    other = std::move(moved);  // other's own block is given back
    EXPECT_EQ(counting.releases(), 2u);
    EXPECT_EQ(other.size(), 300000u);
  }
  EXPECT_EQ(counting.allocations(), 3u);
  EXPECT_EQ(counting.releases(), counting.allocations()) << "a block leaked";
}

TEST(HostBuffer, SetAllocatorGivesHeldMemoryBackToTheOldOne) {
  test::CountingAllocator first, second;
  HostBuffer b(first.get());
  b.resize(1000);
  b.set_allocator(second.get());
  EXPECT_EQ(first.releases(), 1u);
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.capacity(), 0u);
  b.resize(1000);
  EXPECT_EQ(second.allocations(), 1u);
  EXPECT_TRUE(second.owns(b.data(), 1000));
}

void* refuse(size_t, void*) { return nullptr; }
void* misalign(size_t bytes, void*) { return static_cast<char*>(std::aligned_alloc(64, bytes + 64)) + 8; }
void release_misaligned(void* p, void*) { std::free(static_cast<char*>(p) - 8); }
void no_release(void*, void*) {}

TEST(HostBuffer, AllocatorFailuresNameTheAllocator) {
  const HostAllocator full{refuse, no_release, nullptr, "pinned-test"};
  HostBuffer b(&full);
  try {
    b.resize(10);
    FAIL() << "no error from a refusing allocator";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'pinned-test' could not allocate 65536 bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(b.capacity(), 0u);
  const HostAllocator odd{misalign, release_misaligned, nullptr, "odd"};
  HostBuffer c(&odd);
  EXPECT_THROW(c.resize(10), Error);
  EXPECT_EQ(c.data(), nullptr);
}

}  // namespace
}  // namespace bt
