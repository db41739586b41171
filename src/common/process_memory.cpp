#include "common/process_memory.h"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/file_gate.h"

namespace bt {
namespace {

// The "<field>: N kB" value of a /proc status-style file, in bytes; 0 when absent.
uint64_t proc_kb_field(const char* path, const char* field) {
  std::vector<uint8_t> bytes;
  if (!try_read_regular_file(path, bytes, 1 << 20).empty()) return 0;
  const std::string text(bytes.begin(), bytes.end());
  const std::string key = std::string(field) + ":";
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    if (at != 0 && text[at - 1] != '\n') continue;  // a field name, not the tail of another
    return std::strtoull(text.c_str() + at + key.size(), nullptr, 10) * 1024;
  }
  return 0;
}

}  // namespace

uint64_t rss_bytes() { return proc_kb_field("/proc/self/status", "VmRSS"); }
uint64_t peak_rss_bytes() { return proc_kb_field("/proc/self/status", "VmHWM"); }
uint64_t available_memory_bytes() { return proc_kb_field("/proc/meminfo", "MemAvailable"); }

bool reset_peak_rss() {
  const int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, "5", 1) == 1;
  ::close(fd);
  return ok;
}

void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace bt
