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
long minor_page_faults();   // page faults served without I/O so far (getrusage): fresh memory touched, mostly
// Hands the allocator's free pages back to the kernel (glibc malloc_trim), so memory a finished run freed is not
// counted resident in the next one's peak.
void release_free_memory();
// From now on freed memory stays in the allocator for reuse (glibc: no block gets its own mmap, the heaps are not
// trimmed): torch allocates and frees tens of MB per activation every step, and a fresh mapping is zero-filled by
// the kernel page by page on first touch and unmapped again on free -- a third of a base-preset CPU step went to
// those page faults (docs/PERFORMANCE.md). Peak resident memory stays what the step needs; release_free_memory()
// still hands free pages back. Called first thing by init_runtime (common/runtime.h); a no-op where the switch
// BRIDGETUNE_KEEP_FREED_MEMORY=0 leaves the allocator as it is (the A/B switch of bench/model/step_hf_bench.py).
void keep_freed_memory_for_reuse();

}  // namespace bt
