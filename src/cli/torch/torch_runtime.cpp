// Process-wide torch settings every torch command needs before its first tensor. They are made while the
// executable's static objects are constructed (this file is compiled in only when libtorch is; cli/main.cpp builds
// without it): after libc10's own initialisers, before main().
#include "model/api.h"

namespace {
// Freed tensor memory is reused by the next same-sized tensor (model/runtime.cpp); with main()'s
// keep_freed_memory_for_reuse() a training step's activations stay off fresh, page-faulting memory.
const bool kReusingCpuAllocator = (bt::model::use_reusing_cpu_allocator(), true);
}  // namespace
