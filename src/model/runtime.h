// The process's runtime for a binary that runs the model (bridgetune, the benches, the torch test mains): one call,
// first thing in main(), before the first tensor. Torch-free header (the CLI's main.cpp includes it).
#pragma once
#include "common/runtime.h"

namespace bt::model {

// bt::init_runtime (the switches read once, glibc's allocator policy, OpenBLAS on one thread), then torch's CPU
// tensors from the reusing allocator (use_reusing_cpu_allocator, where BRIDGETUNE_KEEP_FREED_MEMORY is on) and,
// when options.torch_threads >= 0, torch's intra-op threads (configure_torch_threads).
void init_runtime(const RuntimeOptions& options = {});

}  // namespace bt::model
