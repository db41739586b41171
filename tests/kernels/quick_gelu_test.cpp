// The fused QuickGELU (kernels/quick_gelu/quick_gelu.h) against x * sigmoid(1.702 x): values and gradients on the
// CPU, in float, double and bf16, contiguous or not.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <optional>

#include "common/runtime.h"
#include "kernels/quick_gelu/quick_gelu.h"
#include "kernels/registry.h"
#include "model/bridgetower.h"

using namespace bt::kernels;
using namespace bt::model;

namespace {
// The exact function and derivative, in double.
torch::Tensor f64(const torch::Tensor& x) {
  auto d = x.to(torch::kDouble);
  return d * torch::sigmoid(1.702 * d);
}
torch::Tensor df64(const torch::Tensor& x) {
  auto d = x.to(torch::kDouble);
  auto s = torch::sigmoid(1.702 * d);
  return s + 1.702 * d * s * (1 - s);
}
torch::Tensor inputs(torch::ScalarType t) {
  torch::manual_seed(3);
  // Wide range (both tails of the sigmoid) plus exact zeros and large magnitudes.
  auto x = torch::cat({torch::randn({4097}) * 4, torch::zeros({3}), torch::tensor({-30.f, 30.f, -90.f, 90.f})});
  return x.to(t);
}
}  // namespace

TEST(QuickGelu, ForwardMatchesFormulaInFloatAndDouble) {
  for (auto t : {torch::kFloat, torch::kDouble}) {
    auto x = inputs(t);
    auto y = quick_gelu_forward(x);
    ASSERT_EQ(y.scalar_type(), t);
    const double err = (y.to(torch::kDouble) - f64(x)).abs().max().item<double>();
    // no less accurate than the composite ops in the same type (float: the exp's argument rounding dominates)
    const double composite_err = (quick_gelu_reference(x).to(torch::kDouble) - f64(x)).abs().max().item<double>();
    EXPECT_LE(err, 1.5 * composite_err + (t == torch::kFloat ? 1e-7 : 1e-14)) << t;
    EXPECT_LT(err, t == torch::kFloat ? 1e-5 : 1e-13) << t;
    EXPECT_TRUE(torch::allclose(y, quick_gelu_reference(x), 1e-5, 1e-6));
  }
}

TEST(QuickGelu, GradientsMatchTheCompositeOpsAutograd) {
  for (auto t : {torch::kFloat, torch::kDouble}) {
    auto x0 = inputs(t);
    auto w = torch::randn(x0.sizes()).to(t);
    auto x1 = x0.clone().requires_grad_(true), x2 = x0.clone().requires_grad_(true);
    (quick_gelu(x1) * w).sum().backward();
    (quick_gelu_reference(x2) * w).sum().backward();
    const double tol = t == torch::kFloat ? 1e-5 : 1e-12;
    EXPECT_TRUE(torch::allclose(x1.grad(), x2.grad(), tol, tol)) << (x1.grad() - x2.grad()).abs().max();
    // and against the exact derivative
    EXPECT_LT((x1.grad().to(torch::kDouble) - w.to(torch::kDouble) * df64(x0)).abs().max().item<double>(), tol * 10);
  }
}

// bf16: float math (an exp two float ulps from exact) rounded once -- so the exact value rounded to bf16 but for
// values within a few float ulps of a rounding boundary, and never a bf16 ulp off.
namespace {
void expect_rounded_once(const torch::Tensor& got, const torch::Tensor& exact, const char* what) {
  ASSERT_EQ(got.scalar_type(), torch::kBFloat16) << what;
  const auto rounded = exact.to(torch::kBFloat16);
  const auto ulp = (rounded.to(torch::kFloat).abs() * std::ldexp(1.0, -7)).clamp_min(1e-30);
  const auto off = (got.to(torch::kFloat) - rounded.to(torch::kFloat)).abs();
  EXPECT_TRUE((off <= ulp).all().item<bool>()) << what << ": " << (off / ulp).max();
  EXPECT_GE(got.eq(rounded).to(torch::kFloat).mean().item<double>(), 0.995) << what;
}
}  // namespace

TEST(QuickGelu, Bf16RoundsOnceFromFloatMath) {
  auto x = inputs(torch::kBFloat16);
  expect_rounded_once(quick_gelu_forward(x), f64(x), "forward");
  auto g = torch::randn(x.sizes()).to(torch::kBFloat16);
  expect_rounded_once(quick_gelu_backward(g, x), g.to(torch::kDouble) * df64(x), "backward");
  // the autograd function takes the bf16 kernels (the composite rounds three times: it is not within one ulp)
  auto xr = x.clone().requires_grad_(true);
  auto y = quick_gelu(xr);
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name().find("Mul"), std::string::npos) << y.grad_fn()->name();
  y.backward(g);
  expect_rounded_once(xr.grad(), g.to(torch::kDouble) * df64(x), "autograd");
}

TEST(QuickGelu, NonContiguousAndShapedInput) {
  torch::manual_seed(5);
  auto base = torch::randn({6, 10, 8});
  auto x = base.transpose(0, 2).requires_grad_(false);  // [8, 10, 6], not contiguous
  ASSERT_FALSE(x.is_contiguous());
  auto y = quick_gelu(x);
  EXPECT_EQ(y.sizes(), x.sizes());
  EXPECT_TRUE(torch::allclose(y, quick_gelu_reference(x), 1e-6, 1e-6));
  auto xr = x.detach().requires_grad_(true);
  quick_gelu(xr).pow(2).sum().backward();
  auto xs = x.detach().requires_grad_(true);
  quick_gelu_reference(xs).pow(2).sum().backward();
  EXPECT_TRUE(torch::allclose(xr.grad(), xs.grad(), 1e-5, 1e-6));
}

// A registered kernel that throws is dropped after one line, and that very call (forward and backward) completes
// on the fallback with the same values; the path says what happened (the GPU check's rows record it).
namespace {
void throwing_fwd(const torch::Tensor&, torch::Tensor&) { throw std::runtime_error("launch failed"); }
void throwing_bwd(const torch::Tensor&, const torch::Tensor&, torch::Tensor&) {
  throw std::runtime_error("launch failed");
}
}  // namespace

TEST(QuickGelu, AFailingKernelFallsBackAndSaysSo) {
  KernelPaths run;  // this run's record (kernels/registry.h)
  std::optional<ScopedKernelPaths> scope(&run);
  EXPECT_EQ(run.name(Kernel::kQuickGelu), "composite");
  auto x0 = inputs(torch::kFloat);
  auto x1 = x0.clone().requires_grad_(true), x2 = x0.clone().requires_grad_(true);
  set_quick_gelu_cuda(throwing_fwd, throwing_bwd, /*any_device=*/true);
  auto y1 = quick_gelu(x1);  // the kernel applies (any_device), throws, and the call still returns
  EXPECT_EQ(run.name(Kernel::kQuickGelu), "composite (CUDA kernel failed)");
  y1.sum().backward();
  quick_gelu(x2).sum().backward();  // kernels unregistered by now: the plain CPU path
  EXPECT_TRUE(torch::equal(y1, quick_gelu(x0)));
  EXPECT_TRUE(torch::equal(x1.grad(), x2.grad()));
  // only the backward kernel fails: the forward ran on the kernel, the gradient on the fallback
  set_quick_gelu_cuda([](const torch::Tensor& x, torch::Tensor& y) { y.copy_(quick_gelu_reference(x)); }, throwing_bwd,
                      true);
  KernelPaths next;  // a second run: its own record; the forward's record reaches the backward
  scope.emplace(&next);
  auto x3 = x0.clone().requires_grad_(true);
  auto y3 = quick_gelu(x3);
  EXPECT_EQ(next.name(Kernel::kQuickGelu), "cuda_kernel");
  scope.reset();  // the backward still writes to the record its forward ran under
  y3.sum().backward();
  EXPECT_EQ(next.name(Kernel::kQuickGelu), "composite (CUDA kernel failed)");
  EXPECT_EQ(run.name(Kernel::kQuickGelu), "composite (CUDA kernel failed)");
  EXPECT_TRUE(torch::allclose(x3.grad(), x2.grad(), 1e-6, 1e-6));
}

// The model registers its fused ops itself whenever one is built (kernels/cuda_ops.h), so evaluate, forward and encode
// take them as train does. Seen without a GPU through the fault injection: BRIDGETUNE_FUSED_OPS=fail registers
// failing stand-ins for every device, and a CPU QuickGELU then falls back once, saying so.
TEST(QuickGelu, BuildingAModelRegistersTheFusedOps) {
  set_quick_gelu_cuda(nullptr, nullptr);
  KernelPaths run;
  const ScopedKernelPaths scope(&run);
  {
    bt::RuntimeSwitches fail = bt::runtime_switches();
    fail.fused_ops = bt::FusedOps::kFail;
    const bt::ScopedRuntimeSwitches switches(fail);
    BridgeTowerForContrastiveLearning model(preset("tiny"), torch::TensorOptions().device(torch::kMeta));
  }
  auto x = inputs(torch::kFloat);
  EXPECT_TRUE(torch::allclose(quick_gelu_forward(x), quick_gelu_reference(x), 1e-5, 1e-6));
  EXPECT_EQ(run.name(Kernel::kQuickGelu), "composite (CUDA kernel failed)");
  set_quick_gelu_cuda(nullptr, nullptr);
}
