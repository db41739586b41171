#include "kernels/quick_gelu/quick_gelu.h"

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>

#include "kernels/bf16.h"
#include "kernels/fast_exp.h"
#include "kernels/registry.h"

namespace bt::kernels {

using torch::Tensor;

namespace {

constexpr double kAlpha = 1.702;  // cast to the math type: 1.702f for float, exact for double
std::atomic<QuickGeluCudaFwd> g_cuda_fwd{nullptr};
std::atomic<QuickGeluCudaBwd> g_cuda_bwd{nullptr};
std::atomic<bool> g_any_device{false};

// One pass over contiguous memory, math in float (acc_type), one rounding to the output type.
template <typename F>
void elementwise(int64_t n, F&& f) {
  at::parallel_for(0, n, 32768, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}

// bf16 on bf16 bits: float math with fast_exp, one rounding; loops GCC vectorises (c10's scalar conversions and
// std::exp made a dispatched bf16 loop slower than the composite ops).
BT_CPU_KERNEL(forward_bf16, (const uint16_t* in, uint16_t* out, int64_t b, int64_t e), (in, out, b, e)) {
  const float alpha = static_cast<float>(kAlpha);
  for (int64_t i = b; i < e; ++i) {
    const float v = float_from_bf16_bits(in[i]);
    out[i] = bf16_bits(v / (1.0f + fast_exp(-alpha * v)));
  }
}

BT_CPU_KERNEL(backward_bf16, (const uint16_t* grad, const uint16_t* in, uint16_t* out, int64_t b, int64_t e),
              (grad, in, out, b, e)) {
  const float alpha = static_cast<float>(kAlpha);
  for (int64_t i = b; i < e; ++i) {
    const float v = float_from_bf16_bits(in[i]);
    const float s = 1.0f / (1.0f + fast_exp(-alpha * v));
    out[i] = bf16_bits(float_from_bf16_bits(grad[i]) * s * (1.0f + alpha * v * (1.0f - s)));
  }
}

Tensor cpu_forward(const Tensor& x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  if (xc.scalar_type() == at::kBFloat16) {
    at::parallel_for(0, xc.numel(), 32768,
                     [&](int64_t b, int64_t e) { forward_bf16(bf16_bits_of(xc), bf16_bits_of(y), b, e); });
    return y;
  }
  AT_DISPATCH_FLOATING_TYPES_AND(at::kHalf, xc.scalar_type(), "quick_gelu_forward", [&] {
    const scalar_t* in = xc.data_ptr<scalar_t>();
    scalar_t* out = y.data_ptr<scalar_t>();
    using acc = at::opmath_type<scalar_t>;
    elementwise(xc.numel(), [&](int64_t i) {
      const acc v = static_cast<acc>(in[i]);
      out[i] = static_cast<scalar_t>(v / (acc(1) + std::exp(-acc(kAlpha) * v)));
    });
  });
  return y;
}

Tensor cpu_backward(const Tensor& grad, const Tensor& x) {
  auto xc = x.contiguous();
  auto gc = grad.contiguous().to(xc.scalar_type());
  auto dx = torch::empty_like(xc);
  if (xc.scalar_type() == at::kBFloat16) {
    at::parallel_for(0, xc.numel(), 32768,
                     [&](int64_t b, int64_t e) {
                       backward_bf16(bf16_bits_of(gc), bf16_bits_of(xc), bf16_bits_of(dx), b, e);
                     });
    return dx;
  }
  AT_DISPATCH_FLOATING_TYPES_AND(at::kHalf, xc.scalar_type(), "quick_gelu_backward", [&] {
    const scalar_t* in = xc.data_ptr<scalar_t>();
    const scalar_t* g = gc.data_ptr<scalar_t>();
    scalar_t* out = dx.data_ptr<scalar_t>();
    using acc = at::opmath_type<scalar_t>;
    elementwise(xc.numel(), [&](int64_t i) {
      const acc v = static_cast<acc>(in[i]);
      const acc s = acc(1) / (acc(1) + std::exp(-acc(kAlpha) * v));
      out[i] = static_cast<scalar_t>(static_cast<acc>(g[i]) * s * (acc(1) + acc(kAlpha) * v * (acc(1) - s)));
    });
  });
  return dx;
}

bool cuda_kernels_apply(const Tensor& x) {
  return (x.is_cuda() || g_any_device.load()) && g_cuda_fwd.load() && g_cuda_bwd.load() &&
         (x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kHalf);
}

Tensor forward_on(const Tensor& x, KernelPaths* paths);
Tensor backward_on(const Tensor& grad, const Tensor& x, KernelPaths* paths);

// The forward's record (kernels/registry.h) travels with the node: CUDA runs the backward on autograd's own thread.
struct QuickGeluFn : torch::autograd::Function<QuickGeluFn> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    KernelPaths* paths = current_kernel_paths();
    ctx->saved_data["kernel_paths"] = static_cast<int64_t>(reinterpret_cast<intptr_t>(paths));
    return forward_on(x, paths);
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto x = ctx->get_saved_variables()[0];
    auto* paths = reinterpret_cast<KernelPaths*>(static_cast<intptr_t>(ctx->saved_data["kernel_paths"].toInt()));
    return {backward_on(grads[0], x, paths)};
  }
};

void record(KernelPaths* paths, KernelPath p) {
  if (paths) paths->record(Kernel::kQuickGelu, p);
}

// A kernel that throws (a launch error, an unsupported device) unregisters both kernels, says so in one line
// and the call completes on the composite ops: a fast path never costs the run.
void drop_cuda_kernels(const std::exception& e, KernelPaths* paths) {
  const std::string what = e.what();
  std::fprintf(stderr, "bridgetune: QuickGELU CUDA kernel failed (%s); using the composite ops from now on\n",
               what.substr(0, what.find('\n')).c_str());
  set_quick_gelu_cuda(nullptr, nullptr, false);
  record(paths, KernelPath::kFastFailed);
}

Tensor forward_on(const Tensor& x, KernelPaths* paths) {
  if (cuda_kernels_apply(x)) {
    try {
      auto xc = x.contiguous();
      auto y = torch::empty_like(xc);
      g_cuda_fwd.load()(xc, y);
      record(paths, KernelPath::kFast);
      return y;
    } catch (const std::exception& e) {
      drop_cuda_kernels(e, paths);
    }
  }
  if (x.is_cpu()) return cpu_forward(x);
  return quick_gelu_reference(x);
}

Tensor backward_on(const Tensor& grad, const Tensor& x, KernelPaths* paths) {
  if (cuda_kernels_apply(x)) {
    try {
      auto xc = x.contiguous();
      auto gc = grad.contiguous().to(xc.scalar_type());
      auto dx = torch::empty_like(xc);
      g_cuda_bwd.load()(gc, xc, dx);
      return dx;
    } catch (const std::exception& e) {
      drop_cuda_kernels(e, paths);
    }
  }
  if (x.is_cpu()) return cpu_backward(grad, x);
  const auto s = torch::sigmoid(1.702 * x);
  return grad * s * (1 + 1.702 * x * (1 - s));
}

}  // namespace

Tensor quick_gelu_reference(const Tensor& x) { return x * torch::sigmoid(1.702 * x); }

Tensor quick_gelu_forward(const Tensor& x) { return forward_on(x, current_kernel_paths()); }

Tensor quick_gelu_backward(const Tensor& grad, const Tensor& x) { return backward_on(grad, x, current_kernel_paths()); }

Tensor quick_gelu(const Tensor& x) {
  // The composite under autograd where the fused kernels would not pay: CUDA without registered kernels (its
  // own backward is cheaper than the composite backward above), and half on the CPU (scalar conversions cost
  // more than the saved passes: bench_quick_gelu, docs/PERFORMANCE.md; bf16 has its vectorised loops).
  const auto t = x.scalar_type();
  const bool cpu_fast = x.is_cpu() && (t == at::kFloat || t == at::kDouble || t == at::kBFloat16);
  if (!cpu_fast && !cuda_kernels_apply(x)) return quick_gelu_reference(x);
  return QuickGeluFn::apply(x);
}

void set_quick_gelu_cuda(QuickGeluCudaFwd fwd, QuickGeluCudaBwd bwd, bool any_device) {
  g_any_device.store(any_device && fwd);
  g_cuda_fwd.store(fwd);
  g_cuda_bwd.store(bwd);
}

}  // namespace bt::kernels
