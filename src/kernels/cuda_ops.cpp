#include "kernels/cuda_ops.h"

#include "common/error.h"
#include "common/runtime.h"

#include "kernels/quick_gelu/quick_gelu.h"

#if defined(BT_HAVE_CUDA) && defined(BT_TORCH_CUDA)
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "kernels/quick_gelu/quick_gelu_cuda.h"
#endif

namespace bt::kernels {

#if defined(BT_HAVE_CUDA) && defined(BT_TORCH_CUDA)
namespace {

cuda::Elt elt(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kBFloat16: return cuda::Elt::kBF16;
    case torch::kHalf: return cuda::Elt::kF16;
    case torch::kFloat: return cuda::Elt::kF32;
    default: fail("QuickGELU CUDA kernel: unsupported dtype ", t.scalar_type());
  }
}

void fwd(const torch::Tensor& x, torch::Tensor& y) {
  const c10::cuda::CUDAGuard guard(x.device());
  const auto err = cuda::quick_gelu_forward(x.data_ptr(), y.data_ptr(), x.numel(), elt(x),
                                            at::cuda::getCurrentCUDAStream(x.device().index()).stream());
  if (!err.empty()) fail("QuickGELU CUDA kernel: ", err);
}

void bwd(const torch::Tensor& dy, const torch::Tensor& x, torch::Tensor& dx) {
  const c10::cuda::CUDAGuard guard(x.device());
  const auto err = cuda::quick_gelu_backward(dy.data_ptr(), x.data_ptr(), dx.data_ptr(), x.numel(), elt(x),
                                             at::cuda::getCurrentCUDAStream(x.device().index()).stream());
  if (!err.empty()) fail("QuickGELU CUDA kernel: ", err);
}

}  // namespace

bool register_real_kernels() {
  set_quick_gelu_cuda(fwd, bwd);
  return true;
}
#else
bool register_real_kernels() { return false; }
#endif

namespace {
[[noreturn]] void injected_failure() { fail("simulated kernel failure (BRIDGETUNE_FUSED_OPS=fail)"); }
void failing_fwd(const torch::Tensor&, torch::Tensor&) { injected_failure(); }
void failing_bwd(const torch::Tensor&, const torch::Tensor&, torch::Tensor&) { injected_failure(); }
}  // namespace

bool register_cuda_ops() {
  if (fused_ops_fail_injected()) {
    set_quick_gelu_cuda(failing_fwd, failing_bwd, /*any_device=*/true);
    return true;
  }
  if (!fused_ops_enabled()) return false;
  return register_real_kernels();
}

bool fused_ops_enabled() { return runtime_switches().fused_ops != FusedOps::kOff; }

bool fused_ops_fail_injected() { return runtime_switches().fused_ops == FusedOps::kFail; }

}  // namespace bt::kernels
