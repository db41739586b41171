#include "loader/decoded_cache.h"

#include <gtest/gtest.h>

#include <thread>

namespace bt::loader {
namespace {

TEST(DecodedCache, EvictsLeastRecentlyUsed) {
  DecodedCache c(30);
  uint8_t a[10] = {1}, b[10] = {2}, d[10] = {4}, out[10] = {};
  c.put("a", a, 10);
  c.put("b", b, 10);
  c.put("c", b, 10);
  EXPECT_TRUE(c.get("a", out, 10));  // a is now the most recent
  EXPECT_EQ(out[0], 1);
  c.put("d", d, 10);  // evicts b
  EXPECT_FALSE(c.get("b", out, 10));
  EXPECT_TRUE(c.get("c", out, 10));
  EXPECT_TRUE(c.get("d", out, 10));
  EXPECT_EQ(out[0], 4);
  EXPECT_EQ(c.bytes(), 30u);
  EXPECT_EQ(c.entries(), 3u);
  EXPECT_EQ(c.hits(), 3u);
  EXPECT_EQ(c.misses(), 1u);
}

TEST(DecodedCache, SizeMismatchIsAMissAndOversizeIsNotStored) {
  DecodedCache c(16);
  uint8_t big[32] = {}, out[8];
  c.put("x", big, 8);
  EXPECT_FALSE(c.get("x", out, 4));
  c.put("y", big, 32);
  EXPECT_FALSE(c.get("y", big, 32));
  EXPECT_LE(c.bytes(), 16u);
}

TEST(DecodedCache, ConcurrentUseIsSafe) {
  DecodedCache c(1000);
  auto work = [&](int t) {
    uint8_t v[50], out[50];
    for (int i = 0; i < 2000; ++i) {
      std::string k = std::to_string((i * 7 + t) % 40);
      std::fill(v, v + 50, static_cast<uint8_t>(k.size()));
      if (c.get(k, out, 50)) EXPECT_EQ(out[49], k.size());
      else c.put(k, v, 50);
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  EXPECT_LE(c.bytes(), 1000u);
  EXPECT_EQ(c.hits() + c.misses(), 4000u);
}

}  // namespace
}  // namespace bt::loader
