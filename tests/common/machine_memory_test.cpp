// The machine's memory for budgets (common/machine_memory.h): /proc/meminfo and cgroup limit files parsed without
// trusting them, and a positive figure whatever is readable.
#include <gtest/gtest.h>

#include "common/machine_memory.h"

TEST(MachineMemory, ParsesMeminfo) {
  const char* text = "MemTotal:       24683520 kB\nMemFree:        12636164 kB\nMemAvailable:   22209452 kB\n";
  EXPECT_EQ(bt::parse_meminfo_bytes(text, "MemAvailable"), 22209452ull * 1024);
  EXPECT_EQ(bt::parse_meminfo_bytes(text, "MemTotal"), 24683520ull * 1024);
  EXPECT_EQ(bt::parse_meminfo_bytes(text, "Mem"), 0u);  // a prefix of a key is not the key
  EXPECT_EQ(bt::parse_meminfo_bytes("MemAvailable: lots kB\n", "MemAvailable"), 0u);
  EXPECT_EQ(bt::parse_meminfo_bytes("MemAvailable: 99999999999999999999999 kB", "MemAvailable"), 0u);  // overflow
  EXPECT_EQ(bt::parse_meminfo_bytes("", "MemAvailable"), 0u);
}

TEST(MachineMemory, ParsesCgroupLimits) {
  EXPECT_EQ(bt::parse_cgroup_limit("536870912\n"), 536870912u);
  EXPECT_EQ(bt::parse_cgroup_limit("max\n"), 0u);                   // v2: no limit
  EXPECT_EQ(bt::parse_cgroup_limit("9223372036854771712\n"), 0u);   // v1: no limit
  EXPECT_EQ(bt::parse_cgroup_limit(""), 0u);
}

TEST(MachineMemory, IsPositiveAndFormatted) {
  EXPECT_GT(bt::machine_memory_bytes(), uint64_t(1) << 20);
  EXPECT_EQ(bt::bytes_str(10700000000ull), "10.7 GB");
  EXPECT_EQ(bt::bytes_str(537000000ull), "537 MB");
  EXPECT_EQ(bt::bytes_str(2500000ull), "2.5 MB");
}
