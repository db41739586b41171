// The model's own CUDA kernels (src/cuda, raw pointers + a stream) hooked into its torch ops, for a build with
// the kernels AND a CUDA libtorch; elsewhere a no-op. Today: the fused QuickGELU (model/quick_gelu.h).
// BT_FUSED_OPS=0 in the environment leaves them unregistered (the composite ops: an A/B switch for benches).
#pragma once

namespace bt::train {

// Idempotent; returns whether the kernels are registered.
bool register_cuda_ops();

}  // namespace bt::train
