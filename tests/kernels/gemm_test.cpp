// kernels::linear (kernels/gemm/gemm.h): oneDNN's float32 GEMM on the CPU against torch::linear in double -- values
// and the three gradients, contiguous or not, with and without bias, only some inputs requiring grad; attention's strided q/k/v views -- and the cases
// that must stay on torch::linear (the BRIDGETUNE_CPU_GEMM=torch switch); under bf16 autocast, autocast's rounding with
// float32 gradients.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "common/cpu_isa.h"
#include "common/runtime.h"
#include "kernels/autocast.h"
#include "kernels/gemm/gemm.h"
#include "model/api.h"

using namespace bt::kernels;
using namespace bt::model;

namespace {
struct Grads {
  torch::Tensor y, gx, gw, gb;
};

// y = f(x, w, b); then (y * probe).sum() backward. Leaves are fresh copies so every call starts clean.
template <typename F>
Grads run(F&& f, const torch::Tensor& x0, const torch::Tensor& w0, const torch::Tensor& b0, const torch::Tensor& probe,
          bool x_grad = true) {
  auto x = x0.detach().clone().requires_grad_(x_grad), w = w0.detach().clone().requires_grad_(true);
  auto b = b0.defined() ? b0.detach().clone().requires_grad_(true) : torch::Tensor();
  auto y = f(x, w, b);
  (y * probe.to(y.scalar_type())).sum().backward();
  return {y.detach(), x_grad ? x.grad() : torch::Tensor(), w.grad(), b.defined() ? b.grad() : torch::Tensor()};
}

double rel_err(const torch::Tensor& got, const torch::Tensor& want) {
  return ((got.to(torch::kDouble) - want).abs().max() / want.abs().max()).item<double>();
}

bool libdnnl_loaded() { return dlopen("libdnnl.so.2", RTLD_NOW | RTLD_NOLOAD) != nullptr; }
void check_bf16_autocast_linear();
}  // namespace

TEST(Linear, OneDnnIsUsedWhereLibtorchLoadsIt) {
  if (!libdnnl_loaded()) GTEST_SKIP() << "this libtorch does not load libdnnl.so.2";
  EXPECT_EQ(cpu_gemm_name(), "onednn");
}

TEST(Linear, ValuesAndGradientsMatchDoublePrecision) {
  torch::manual_seed(5);
  auto probe = torch::randn({3, 5, 29});
  auto w = torch::randn({29, 37}), b = torch::randn({29});
  auto contiguous = torch::randn({3, 5, 37});
  auto strided = torch::randn({37, 5, 3}).permute({2, 1, 0});  // the same shape, not contiguous
  for (const auto& x : {contiguous, strided}) {
    for (bool with_bias : {true, false}) {
      for (bool x_grad : {true, false}) {
        const auto bias = with_bias ? b : torch::Tensor();
        auto want = run([](auto& xx, auto& ww, auto& bb) { return torch::linear(xx, ww, bb); }, x.to(torch::kDouble),
                        w.to(torch::kDouble), with_bias ? b.to(torch::kDouble) : torch::Tensor(), probe, x_grad);
        auto got = run([](auto& xx, auto& ww, auto& bb) { return linear(xx, ww, bb); }, x, w, bias, probe, x_grad);
        ASSERT_EQ(got.y.sizes(), want.y.sizes());
        ASSERT_EQ(got.y.scalar_type(), torch::kFloat);
        EXPECT_LT(rel_err(got.y, want.y), 1e-5);
        EXPECT_LT(rel_err(got.gw, want.gw), 1e-5);
        if (x_grad) {
          EXPECT_LT(rel_err(got.gx, want.gx), 1e-5);
        } else {
          EXPECT_FALSE(got.gx.defined());
        }
        if (with_bias) {
          EXPECT_LT(rel_err(got.gb, want.gb), 1e-5);
        }
      }
    }
  }
}

TEST(Linear, NoGradModeGivesTheSameValues) {
  torch::manual_seed(6);
  auto x = torch::randn({64, 48}), w = torch::randn({40, 48}).requires_grad_(true), b = torch::randn({40});
  auto with_graph = linear(x, w, b);
  torch::NoGradGuard no_grad;
  auto without = linear(x, w, b);
  EXPECT_FALSE(without.requires_grad());
  EXPECT_TRUE(torch::equal(with_graph.detach(), without));
}

// Under CPU autocast to bf16: autocast's bf16 operands and bf16 result (within a bf16 rounding of the exact value
// of those operands), and the gradients of float32 inputs exact to float32 (autocast's own linear rounds them to
// bf16 first: ~4e-3, which fails the 1e-5 here). A bf16 x gets a bf16 gradient.
// Both bf16 paths: oneDNN's bf16 GEMM where this CPU has it, and the emulation on float32 GEMMs (every CPU's).
TEST(Linear, Bf16AutocastKeepsAutocastsRoundingAndFloat32Gradients) {
  if (!libdnnl_loaded()) GTEST_SKIP() << "this libtorch does not load libdnnl.so.2";
  for (bool emulated : {false, true}) {
    SCOPED_TRACE(emulated ? "emulated" : "as this CPU runs it");
    set_cpu_bf16_gemm_emulated(emulated);
    if (emulated) {
      EXPECT_EQ(cpu_bf16_gemm_name(), "float32_emulated");
    }
    check_bf16_autocast_linear();
  }
  set_cpu_bf16_gemm_emulated(false);
}

// The path follows what this CPU (as capped) runs: oneDNN's bf16 GEMM exists from AVX512_CORE up, native bf16
// implies it; below, the emulation. Under a cap below AVX-512 on an AVX-512 CPU, libtorch's own oneDNN use is off
// (its bf16 matmul would ask the capped oneDNN for what it no longer has).
TEST(Linear, Bf16PathFollowsTheCpu) {
  if (!libdnnl_loaded()) GTEST_SKIP() << "this libtorch does not load libdnnl.so.2";
  const bt::CpuIsa& isa = bt::cpu_isa();
  if (isa.level != bt::CpuLevel::kAvx512) {
    EXPECT_EQ(cpu_bf16_gemm_name(), "float32_emulated");
  }
  if (isa.bf16_native) {
    EXPECT_EQ(cpu_bf16_gemm_name(), "onednn_bf16");
  }
  EXPECT_EQ(cpu_bf16_note().empty(), isa.bf16_native) << cpu_bf16_note();
  const bool capped_below_avx512 = isa.level != bt::CpuLevel::kAvx512 && isa.hardware_level == bt::CpuLevel::kAvx512;
  EXPECT_EQ(at::globalContext().userEnabledMkldnn(), !capped_below_avx512);
}

// The emulated bf16 batched products: autocast's bf16 operands and result (float32 or bf16 inputs under autocast,
// two bf16 tensors without it), values as exact bf16 products summed in float32, gradients through the casts.
TEST(BatchedMatmul, EmulatedBf16RoundsAsAutocast) {
  if (!libdnnl_loaded()) GTEST_SKIP() << "this libtorch does not load libdnnl.so.2";
  set_cpu_bf16_gemm_emulated(true);
  torch::manual_seed(10);
  auto q0 = torch::randn({2, 3, 5, 16}), k0 = torch::randn({2, 3, 7, 16});
  auto as_bf16 = [](const torch::Tensor& t) { return t.to(torch::kBFloat16).to(torch::kDouble); };
  const auto want = (torch::matmul(as_bf16(q0), as_bf16(k0).transpose(-1, -2)) / 4.0).to(torch::kBFloat16);
  auto q = q0.clone().requires_grad_(true), k = k0.clone().requires_grad_(true);
  torch::Tensor got;
  {
    AutocastScope autocast(true, torch::Device(torch::kCPU));
    got = batched_matmul(q, k, /*transpose_b=*/true, 4.0);
  }
  ASSERT_EQ(got.scalar_type(), torch::kBFloat16);
  // Summation order aside (float32 accumulation), the rounded result is bf16(exact): within one bf16 ulp.
  EXPECT_LE((got.to(torch::kDouble) - want.to(torch::kDouble)).abs().max().item<double>(),
            want.to(torch::kDouble).abs().max().item<double>() / 128.0);
  got.to(torch::kFloat).sum().backward();
  ASSERT_TRUE(q.grad().defined() && k.grad().defined());
  EXPECT_EQ(q.grad().scalar_type(), torch::kFloat);
  // d/dq sum(q k^T / 4) = (sum over rows of k) / 4, from bf16 operands.
  const auto dq = (as_bf16(k0).sum(2, true) / 4.0).expand({2, 3, 5, 16});
  EXPECT_LT(rel_err(q.grad(), dq), 1e-2);
  const auto plain = batched_matmul(q0.to(torch::kBFloat16), k0.to(torch::kBFloat16), true, 4.0);
  EXPECT_EQ(plain.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(plain, got.detach()));
  set_cpu_bf16_gemm_emulated(false);
}

namespace {
// Linear under bf16 autocast against autocast's roundings in double: bf16 values, float32 gradients.
void check_bf16_autocast_linear() {
  torch::manual_seed(8);
  auto probe = torch::randn({3, 5, 29}).to(torch::kBFloat16).to(torch::kFloat);  // the output's gradient, exact in bf16
  auto w = torch::randn({29, 37}), b = torch::randn({29});
  auto as_bf16 = [](const torch::Tensor& t) { return t.to(torch::kBFloat16).to(torch::kDouble); };
  for (bool bf16_x : {false, true}) {
    auto x = torch::randn({3, 5, 37});
    if (bf16_x) x = x.to(torch::kBFloat16);
    auto want = run([](auto& xx, auto& ww, auto& bb) { return torch::linear(xx, ww, bb); }, as_bf16(x), as_bf16(w),
                    as_bf16(b), probe);
    auto got = run(
        [](auto& xx, auto& ww, auto& bb) {
          AutocastScope autocast(true, torch::Device(torch::kCPU));
          return linear(xx, ww, bb);
        },
        x, w, b, probe);
    ASSERT_EQ(got.y.scalar_type(), torch::kBFloat16);
    EXPECT_LT(rel_err(got.y, want.y), 8e-3);
    ASSERT_EQ(got.gw.scalar_type(), torch::kFloat);
    EXPECT_LT(rel_err(got.gw, want.gw), 1e-5);
    EXPECT_LT(rel_err(got.gb, want.gb), 1e-5);
    ASSERT_EQ(got.gx.scalar_type(), x.scalar_type());
    EXPECT_LT(rel_err(got.gx, want.gx), bf16_x ? 8e-3 : 1e-5);
  }
}
// The switch BRIDGETUNE_CPU_GEMM=torch, in-process.
bt::RuntimeSwitches torch_gemm() {
  bt::RuntimeSwitches s = bt::runtime_switches();
  s.cpu_gemm_onednn = false;
  return s;
}
}  // namespace

TEST(Linear, TheSwitchStaysOnTorchLinear) {
  torch::manual_seed(7);
  auto x = torch::randn({16, 24}), w = torch::randn({8, 24}), b = torch::randn({8});
  torch::Tensor y, y_bf16, want_bf16;
  {
    const bt::ScopedRuntimeSwitches scope(torch_gemm());
    EXPECT_EQ(cpu_gemm_name(), "torch");
    y = linear(x, w, b);
    AutocastScope autocast(true, torch::Device(torch::kCPU));
    y_bf16 = linear(x, w, b);
    want_bf16 = torch::linear(x, w, b);
  }
  EXPECT_TRUE(torch::equal(y, torch::linear(x, w, b)));
  EXPECT_TRUE(torch::equal(y_bf16, want_bf16));
}

TEST(BatchedMatmul, ValuesAndGradientsMatchDoublePrecisionOnStridedViews) {
  torch::manual_seed(8);
  // q, k, v as the attention layers make them: heads split out of one [B, L, 3 * H * D] projection, transposed
  // (read in place: not contiguous). The leaf is the projection; its gradient collects all three.
  const int64_t B = 2, L = 7, H = 3, D = 8;
  const auto qkv0 = torch::randn({B, L, 3 * H * D});
  auto probe_scores = torch::randn({B, H, L, L}), probe_ctx = torch::randn({B, H, L, D});
  auto run_attention = [&](auto mm, const torch::Tensor& x0) {
    auto qkv = x0.detach().clone().requires_grad_(true);
    auto heads = [&](int i) { return qkv.narrow(2, i * H * D, H * D).view({B, L, H, D}).transpose(1, 2); };
    EXPECT_FALSE(heads(0).is_contiguous());
    auto scores = mm(heads(0), heads(1), true, 8.0);
    auto ctx = mm(torch::softmax(scores, -1), heads(2), false, 1.0);
    ((scores * probe_scores.to(scores.scalar_type())).sum() + (ctx * probe_ctx.to(ctx.scalar_type())).sum()).backward();
    return std::vector<torch::Tensor>{scores.detach(), ctx.detach(), qkv.grad()};
  };
  auto want = run_attention([](const torch::Tensor& a, const torch::Tensor& b, bool t, double d) {
    return torch::matmul(a, t ? b.transpose(-1, -2) : b) / d;
  }, qkv0.to(torch::kDouble));
  auto got = run_attention([](const torch::Tensor& a, const torch::Tensor& b, bool t, double d) {
    return batched_matmul(a, b, t, d);
  }, qkv0);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].sizes(), want[i].sizes()) << i;
    EXPECT_EQ(got[i].scalar_type(), torch::kFloat);
    EXPECT_LT(rel_err(got[i], want[i]), 1e-5) << "output " << i;
  }
}

TEST(BatchedMatmul, PowerOfTwoScaleIsExactAndTheSwitchGivesTorchsResult) {
  torch::manual_seed(9);
  auto q = torch::randn({2, 2, 5, 64}), k = torch::randn({2, 2, 6, 64});
  auto fused = batched_matmul(q, k, true, 8.0);
  auto unscaled = batched_matmul(q, k, true, 1.0);
  EXPECT_TRUE(torch::equal(fused, unscaled / 8.0));  // alpha = 1/8 inside the GEMM, exact in float
  torch::Tensor reference;
  {
    const bt::ScopedRuntimeSwitches scope(torch_gemm());
    reference = batched_matmul(q, k, true, 8.0);
  }
  EXPECT_TRUE(torch::equal(reference, torch::matmul(q, k.transpose(-1, -2)) / 8.0));
  EXPECT_LT((fused - reference).abs().max().item<double>(), 1e-4);
}
