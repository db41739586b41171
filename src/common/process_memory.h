// This process's resident memory, from Linux /proc: what `bench` reports per configuration and what
// `bench --find_max_batch` measures a micro-batch against (the machine's memory is common/machine_memory.h). The peak is the kernel's
// high-water mark (VmHWM); reset_peak_rss() restarts it (/proc/self/clear_refs, Linux >= 4.0) so one process can
// measure several runs one after another. Every function returns 0 / false where /proc does not say.
#pragma once
#include <cstdint>

namespace bt {

uint64_t rss_bytes();       // resident now (VmRSS)
uint64_t peak_rss_bytes();  // the most resident since the process started or the last reset (VmHWM)
bool reset_peak_rss();      // false: the peak keeps counting from the process's start
// Hands the allocator's free pages back to the kernel (glibc malloc_trim), so memory a finished run freed is not
// counted resident in the next one's peak.
void release_free_memory();

}  // namespace bt
