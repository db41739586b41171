// How much memory this process may take, for budgets checked before allocating (the model size from
// config.json: model/memory_budget.h). The smallest of: the kernel's MemAvailable (/proc/meminfo; physical RAM
// when it cannot be read), the cgroup's limit (v2 memory.max, v1 memory.limit_in_bytes; "max" or absent: none)
// and RLIMIT_AS / RLIMIT_DATA when set. MemAvailable, not MemTotal: memory other processes hold is not ours to
// take, and a run that needs more than is free is killed by the kernel instead of stopping with a message.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace bt {

// The kB value of `key` ("MemAvailable") in /proc/meminfo's text, in bytes; 0 when absent or malformed.
uint64_t parse_meminfo_bytes(std::string_view meminfo, std::string_view key);
// A cgroup limit file's text ("max\n", "9223372036854771712\n", "536870912\n") in bytes; 0 for no limit or
// anything else.
uint64_t parse_cgroup_limit(std::string_view text);

// The machine's memory as described above, in bytes (never 0: physical RAM when nothing else is known).
uint64_t machine_memory_bytes();

// A size for budget messages: "537 MB", "10.8 GB" (decimal units).
std::string bytes_str(uint64_t bytes);

}  // namespace bt
