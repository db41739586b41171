#include "common/process_memory.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string_view>
#include <vector>

#include "common/file_gate.h"
#include "common/machine_memory.h"
#include "common/runtime.h"

namespace bt {
namespace {

// A "<field>: N kB" line of /proc/self/status, in bytes; 0 when absent.
uint64_t status_field(const char* field) {
  std::vector<uint8_t> bytes;
  if (!try_read_regular_file("/proc/self/status", bytes, 1 << 20).empty()) return 0;
  return parse_meminfo_bytes(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), field);
}

}  // namespace

uint64_t rss_bytes() { return status_field("VmRSS"); }
uint64_t peak_rss_bytes() { return status_field("VmHWM"); }

long minor_page_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

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

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  if (!runtime_switches().keep_freed_memory) return;
  mallopt(M_MMAP_MAX, 0);                  // every block from the heaps (threads' arenas fall back to mmap when full)
  mallopt(M_TRIM_THRESHOLD, 0x7fffffff);   // keep up to 2 GiB free at a heap's top (mallopt takes an int)
#endif
}

}  // namespace bt
