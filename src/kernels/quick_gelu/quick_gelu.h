// QuickGELU, CLIP's activation y = x * sigmoid(1.702 x), as one autograd function with its own forward and
// backward kernels: one pass over x each way and only x saved for backward, instead of the three elementwise ops
// (and two saved intermediates) autograd records for the composite. CPU float/double: a fused loop here. CUDA:
// the kernels of quick_gelu.cu once registered (set_quick_gelu_cuda, by kernels/cuda_ops.h, built against a CUDA
// libtorch). Elsewhere (unregistered CUDA, CPU half) quick_gelu() takes the composite ops. The kernels
// compute in float for bf16/half inputs and round once (CPU bf16: with kernels/fast_exp.h's exp, two float ulps).
#pragma once
#include <torch/torch.h>

namespace bt::kernels {

torch::Tensor quick_gelu(const torch::Tensor& x);              // the autograd function (fused where available)
torch::Tensor quick_gelu_reference(const torch::Tensor& x);    // x * sigmoid(1.702 x), composite ops
torch::Tensor quick_gelu_forward(const torch::Tensor& x);      // the kernels alone (no autograd)
torch::Tensor quick_gelu_backward(const torch::Tensor& grad, const torch::Tensor& x);

// CUDA kernels for contiguous tensors of one dtype (float, bf16, half): y = f(x) / dx = dy * f'(x), on the
// current stream. Both null: composite ops.
using QuickGeluCudaFwd = void (*)(const torch::Tensor& x, torch::Tensor& y);
using QuickGeluCudaBwd = void (*)(const torch::Tensor& dy, const torch::Tensor& x, torch::Tensor& dx);
// any_device: the kernels also take CPU tensors (fault injection only: kernels/cuda_ops.h).
void set_quick_gelu_cuda(QuickGeluCudaFwd fwd, QuickGeluCudaBwd bwd, bool any_device = false);
// A registered kernel that throws is unregistered (one line on stderr) and that call finishes on the composite
// ops (the kernels stay unregistered until registered again). What ran goes to the calling thread's record
// (kernels/registry.h, Kernel::kQuickGelu): "cuda_kernel", "composite" or "composite (CUDA kernel failed)".

}  // namespace bt::kernels
