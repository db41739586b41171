// The model's own CUDA kernels (src/kernels/<kernel>/*.cu, raw pointers + a stream) hooked into its torch ops, for
// a build with the kernels AND a CUDA libtorch; elsewhere a no-op. Today: the fused QuickGELU
// (kernels/quick_gelu/quick_gelu.h). The model registers them itself, whenever one is constructed
// (model/bridgetower.cpp), so every command that runs it on CUDA -- train, evaluate, forward, encode, search -- takes
// the fused op.
// The switch BRIDGETUNE_FUSED_OPS (common/runtime.h; BT_FUSED_OPS, its old name, still works): 0 leaves them
// unregistered and the fused AdamW off (the composite ops and the _foreach_ update: the A/B switch of the GPU
// check); fail is fault injection: every fast path
// (QuickGELU kernel, fused AdamW) is taken on any device and throws at its first call, so the fallbacks (one
// line, then the composite path) can be seen working without a GPU.
#pragma once

namespace bt::kernels {

// Idempotent; returns whether kernels are registered (the failing stand-ins under BRIDGETUNE_FUSED_OPS=fail).
bool register_cuda_ops();
// false when BRIDGETUNE_FUSED_OPS=0.
bool fused_ops_enabled();
// true when BRIDGETUNE_FUSED_OPS=fail.
bool fused_ops_fail_injected();

}  // namespace bt::kernels
