// bf16 roundings as differentiable ops on the CPU, for the emulated bf16 products of kernels/gemm/gemm.cpp (a CPU
// without oneDNN's bf16 GEMM runs autocast's bf16 products as float32 GEMMs between these). One vectorised pass each
// (BT_CPU_KERNELs on torch's threads): ATen's dtype copies took 28 % of an emulated small-preset step.
#pragma once
#include <torch/torch.h>

namespace bt::kernels {

// A contiguous float32 tensor of t's values rounded to bf16 (round to nearest even, as autocast's cast): a float32
// t rounded, a bf16 t widened. Backward: the gradient in t's dtype -- a float32 input's stays float32 (as the bf16
// Linear keeps its float32 inputs' gradients), a bf16 input's is rounded.
torch::Tensor bf16_valued(const torch::Tensor& t);

// A contiguous bf16 tensor of a float32 one, rounded to nearest even. Backward: the bf16 gradient widened to float32.
torch::Tensor rounded_to_bf16(const torch::Tensor& f32);

}  // namespace bt::kernels
