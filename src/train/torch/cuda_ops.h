// The model's own CUDA kernels (src/cuda, raw pointers + a stream) hooked into its torch ops, for a build with
// the kernels AND a CUDA libtorch; elsewhere a no-op. Today: the fused QuickGELU (model/quick_gelu.h).
// BT_FUSED_OPS=0 in the environment leaves them unregistered and the fused AdamW off (the composite ops and
// the _foreach_ update: the A/B switch of the GPU check).
#pragma once

namespace bt::train {

// Idempotent; returns whether the kernels are registered.
bool register_cuda_ops();
// false when BT_FUSED_OPS=0.
bool fused_ops_enabled();

}  // namespace bt::train
