// libFuzzer target for common/machine_memory.h's parsers of /proc/meminfo and cgroup limit files: any bytes give a
// number (0 when there is none), never a crash or an overflowed product.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/machine_memory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const uint64_t avail = bt::parse_meminfo_bytes(text, "MemAvailable");
  if (avail % 1024 != 0) std::abort();  // kB times 1024, or 0
  const uint64_t limit = bt::parse_cgroup_limit(text);
  if (limit >= (uint64_t(1) << 62)) std::abort();  // "no limit" is 0, never a huge figure
  (void)bt::bytes_str(avail + limit);
  return 0;
}
