#include "common/machine_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "common/file_gate.h"

namespace bt {
namespace {

// Digits at the start of `s` (after blanks) as a number; false when there are none or they overflow.
bool leading_number(std::string_view s, uint64_t* v) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (i == s.size() || s[i] < '0' || s[i] > '9') return false;
  uint64_t n = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (n > (UINT64_MAX - 9) / 10) return false;
    n = n * 10 + uint64_t(s[i] - '0');
  }
  *v = n;
  return true;
}

// A /proc or /sys file through the file gate (regular, read within a small cap); "" when it cannot be read.
std::string read_system_file(const char* path) {
  std::vector<uint8_t> bytes;
  if (!try_read_regular_file(path, bytes, 1 << 16).empty()) return "";
  return std::string(bytes.begin(), bytes.end());
}

uint64_t physical_ram() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : uint64_t(1) << 30;
}

}  // namespace

uint64_t parse_meminfo_bytes(std::string_view text, std::string_view key) {
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':') continue;
    uint64_t kb = 0;
    if (!leading_number(line.substr(key.size() + 1), &kb) || kb > UINT64_MAX / 1024) return 0;
    return kb * 1024;
  }
  return 0;
}

uint64_t parse_cgroup_limit(std::string_view text) {
  uint64_t v = 0;
  // cgroup v1 writes "no limit" as the largest page-aligned int64 (9223372036854771712): treat >= 2^62 as none.
  if (!leading_number(text, &v) || v >= (uint64_t(1) << 62)) return 0;
  return v;
}

uint64_t machine_memory_bytes() {
  uint64_t m = parse_meminfo_bytes(read_system_file("/proc/meminfo"), "MemAvailable");
  if (m == 0) m = physical_ram();
  for (const char* f : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"})
    if (const uint64_t lim = parse_cgroup_limit(read_system_file(f)); lim > 0) m = std::min(m, lim);
  for (int r : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit rl {};
    if (::getrlimit(r, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) m = std::min<uint64_t>(m, rl.rlim_cur);
  }
  return std::max<uint64_t>(m, 1);
}

std::string bytes_str(uint64_t bytes) {
  char buf[32];
  if (bytes >= 1000000000ull)
    std::snprintf(buf, sizeof buf, "%.1f GB", double(bytes) / 1e9);
  else
    std::snprintf(buf, sizeof buf, bytes >= 100000000ull ? "%.0f MB" : "%.1f MB", double(bytes) / 1e6);
  return buf;
}

}  // namespace bt
