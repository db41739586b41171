#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <optional>

#include "common/error.h"
#include "common/runtime.h"
#include "model/bridgetower.h"
#include "train/torch/optim.h"

using namespace bt::train;

TEST(AdamW, MatchesTorchAdamWExactly) {
  torch::manual_seed(0);
  auto w0 = torch::randn({5, 4}), b0 = torch::randn({4});
  auto w1 = w0.clone().requires_grad_(true), b1 = b0.clone().requires_grad_(true);
  auto w2 = w0.clone().requires_grad_(true), b2 = b0.clone().requires_grad_(true);
  const double lr = 1e-2, wd = 0.1;
  AdamW mine({{"w", w1, true}, {"b", b1, false}}, {lr, 0.9, 0.999, 1e-8, wd});
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<torch::Tensor>{w2}, std::make_unique<torch::optim::AdamWOptions>(
                                                         torch::optim::AdamWOptions(lr).weight_decay(wd)));
  groups.emplace_back(std::vector<torch::Tensor>{b2}, std::make_unique<torch::optim::AdamWOptions>(
                                                         torch::optim::AdamWOptions(lr).weight_decay(0.0)));
  torch::optim::AdamW ref(groups, torch::optim::AdamWOptions(lr));
  auto x = torch::randn({3, 5});
  for (int s = 0; s < 5; ++s) {
    for (auto [w, b] : {std::pair{w1, b1}, std::pair{w2, b2}}) (torch::matmul(x, w) + b).pow(2).sum().backward();
    mine.step(lr);
    ref.step();
    mine.zero_grad();
    ref.zero_grad();
  }
  EXPECT_TRUE(torch::equal(w1, w2));
  EXPECT_TRUE(torch::equal(b1, b2));
  EXPECT_FALSE(torch::equal(w1, w0));
}

TEST(AdamW, StateRoundTripsByName) {
  auto w = torch::ones({3}).requires_grad_(true);
  AdamW a({{"layer.weight", w, true}}, {});
  w.sum().backward();
  a.step(1e-3);
  auto st = a.state_tensors();
  ASSERT_EQ(st.size(), 3u);
  std::map<std::string, torch::Tensor> m(st.begin(), st.end());
  auto w2 = torch::ones({3}).requires_grad_(true);
  AdamW b({{"layer.weight", w2, true}}, {});
  b.load_state(m, "test");
  auto st2 = b.state_tensors();
  EXPECT_TRUE(torch::equal(st2[0].second, st[0].second));
  EXPECT_EQ(st2[2].second.item<int64_t>(), 1);
  m["exp_avg/layer.weight"] = torch::zeros({4});
  EXPECT_THROW(b.load_state(m, "test"), bt::Error);
}

TEST(AdamW, ParamGroupsSkipDecayOnBiasAndLayerNorm) {
  bt::model::BridgeTowerForContrastiveLearning m(bt::model::preset("tiny"));
  AdamW a = make_adamw(*m, {});
  int decay = 0, no_decay = 0;
  for (const auto& p : a.params()) {
    const bool bias = p.name.size() >= 5 && p.name.rfind(".bias") == p.name.size() - 5;
    const bool ln = p.name.find("LayerNorm") != std::string::npos || p.name.find("layernorm") != std::string::npos ||
                    p.name.find("ln_") != std::string::npos || p.name.find(".norm") != std::string::npos;
    if (bias) {
      EXPECT_FALSE(p.decay) << p.name;
    }
    if (ln && p.name.find("weight") != std::string::npos) {
      EXPECT_FALSE(p.decay) << p.name;
    }
    (p.decay ? decay : no_decay)++;
  }
  EXPECT_GT(decay, 10);
  EXPECT_GT(no_decay, 10);
}

TEST(ClipGradNorm, MatchesTorch) {
  auto a = torch::randn({4, 4}).requires_grad_(true), b = torch::randn({4}).requires_grad_(true);
  auto a2 = a.detach().clone().requires_grad_(true), b2 = b.detach().clone().requires_grad_(true);
  (a * 3).sum().backward();
  (b * 4).sum().backward();
  (a2 * 3).sum().backward();
  (b2 * 4).sum().backward();
  const double mine = clip_grad_norm({a, b}, 1.0);
  const double ref = torch::nn::utils::clip_grad_norm_(std::vector<torch::Tensor>{a2, b2}, 1.0);
  EXPECT_NEAR(mine, ref, 1e-5);
  EXPECT_NEAR(mine, std::sqrt(16 * 9.0 + 4 * 16.0), 1e-4);
  EXPECT_TRUE(torch::allclose(a.grad(), a2.grad()));
  EXPECT_NEAR(torch::cat({a.grad().flatten(), b.grad()}).norm().item<double>(), 1.0, 1e-4);
}

// The fused kernel is found in the dispatcher exactly where the libtorch has it (torch >= 2.0), with the signature
// optim.cpp calls it with (a schema mismatch would make this false on 2.x and silently cost the fused step).
TEST(AdamW, FusedKernelFoundWhereTorchHasIt) {
  EXPECT_EQ(AdamW::fused_available(), TORCH_VERSION_MAJOR >= 2);
}

// On CUDA the fused kernel and the _foreach_ path agree to float rounding over a few steps, both decay groups.
TEST(AdamW, FusedMatchesForeachOnCuda) {
  if (!torch::cuda::is_available() || !AdamW::fused_available())
    GTEST_SKIP() << "needs a GPU and a libtorch with aten::_fused_adamw_";
  torch::manual_seed(0);
  const auto dev = torch::Device(torch::kCUDA);
  auto w0 = torch::randn({64, 32}, dev), b0 = torch::randn({32}, dev), x = torch::randn({8, 64}, dev);
  auto w1 = w0.clone().requires_grad_(true), b1 = b0.clone().requires_grad_(true);
  auto w2 = w0.clone().requires_grad_(true), b2 = b0.clone().requires_grad_(true);
  AdamWOptions fused{1e-2, 0.9, 0.999, 1e-8, 0.1, true}, foreach_ = fused;
  foreach_.fused = false;
  AdamW a({{"w", w1, true}, {"b", b1, false}}, fused), b({{"w", w2, true}, {"b", b2, false}}, foreach_);
  for (int s = 0; s < 4; ++s) {
    for (auto [w, bb] : {std::pair{w1, b1}, std::pair{w2, b2}}) (torch::matmul(x, w) + bb).pow(2).sum().backward();
    a.step(1e-2);
    b.step(1e-2);
    a.zero_grad();
    b.zero_grad();
  }
  EXPECT_LT((w1 - w2).abs().max().item<double>(), 1e-5);
  EXPECT_LT((b1 - b2).abs().max().item<double>(), 1e-5);
  EXPECT_GT((w1 - w0).abs().max().item<double>(), 1e-3);
}

// BRIDGETUNE_FUSED_OPS=fail takes the fused path on any device and makes it throw: the step is done by the _foreach_
// path instead (bit-identical to a non-fused optimizer), one line says so, and path_used() records it.
TEST(AdamW, AFailingFusedKernelFallsBackToForeach) {
  torch::manual_seed(0);
  auto w0 = torch::randn({6, 3}), x = torch::randn({2, 6});
  auto w1 = w0.clone().requires_grad_(true), w2 = w0.clone().requires_grad_(true);
  AdamWOptions fused{1e-2, 0.9, 0.999, 1e-8, 0.1, true}, plain = fused;
  plain.fused = false;
  bt::RuntimeSwitches fail = bt::runtime_switches();
  fail.fused_ops = bt::FusedOps::kFail;
  std::optional<bt::ScopedRuntimeSwitches> switches(std::in_place, fail);
  AdamW a({{"w", w1, true}}, fused), b({{"w", w2, true}}, plain);
  testing::internal::CaptureStderr();
  for (int s = 0; s < 3; ++s) {
    for (auto* w : {&w1, &w2}) torch::matmul(x, *w).pow(2).sum().backward();
    a.step(1e-2);
    b.step(1e-2);
    a.zero_grad();
    b.zero_grad();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  switches.reset();
  EXPECT_EQ(a.path_used(), "foreach (fused kernel failed)");
  EXPECT_TRUE(torch::equal(w1, w2));
  EXPECT_FALSE(torch::equal(w1, w0));
  // one line, once: the fused path is off for the rest of the run
  EXPECT_NE(err.find("fused AdamW kernel failed (simulated kernel failure"), std::string::npos) << err;
  EXPECT_EQ(err.find("fused AdamW", err.find("fused AdamW") + 1), std::string::npos) << err;
  // each optimizer its own record (a run's: AdamWOptions::paths): b took the plain path all along
  EXPECT_EQ(b.path_used(), "foreach");
  AdamWOptions recorded = plain;
  recorded.paths = std::make_shared<bt::kernels::KernelPaths>();
  auto w3 = w0.clone().requires_grad_(true);
  AdamW c({{"w", w3, true}}, recorded);
  c.step(1e-2);  // a parameter without a gradient is skipped: no path at all
  EXPECT_EQ(recorded.paths->name(bt::kernels::Kernel::kAdamW), "none");
  torch::matmul(x, w3).pow(2).sum().backward();
  c.step(1e-2);
  EXPECT_EQ(recorded.paths->name(bt::kernels::Kernel::kAdamW), "foreach");  // the run's record, handed over
}

// A parameter's lr_scale is its own learning rate: scale s at lr steps exactly as scale 1 at s * lr (weight decay
// included), and parameters of different scales share one optimizer.
TEST(AdamW, LrScaleIsTheParametersOwnLearningRate) {
  torch::manual_seed(3);
  auto w0 = torch::randn({4, 3});
  auto scaled = w0.clone().requires_grad_(true), plain = w0.clone().requires_grad_(true);
  auto other = w0.clone().requires_grad_(true);
  const double lr = 1e-2;
  AdamW mixed({{"scaled", scaled, true, 0.25}, {"other", other, true, 1.0}}, {lr, 0.9, 0.999, 1e-8, 0.1});
  AdamW reference({{"plain", plain, true}}, {lr, 0.9, 0.999, 1e-8, 0.1});
  auto x = torch::randn({2, 4});
  for (int s = 0; s < 3; ++s) {
    for (const auto& w : {scaled, plain, other}) torch::matmul(x, w).pow(2).sum().backward();
    mixed.step(lr);
    reference.step(0.25 * lr);
    mixed.zero_grad();
    reference.zero_grad();
  }
  EXPECT_TRUE(torch::equal(scaled, plain));
  EXPECT_FALSE(torch::equal(other, plain));
}
