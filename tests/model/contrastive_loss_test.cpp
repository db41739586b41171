// model/contrastive_loss.h: the similarity logits stay fp32 under bf16 autocast (bf16 would quantise a logit of
// ~14-100 to steps of 0.06-0.5 before the softmax; the bf16 demo's retrieval lost a fifth of its R@1 to it).
#include "model/contrastive_loss.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "kernels/autocast.h"

TEST(ContrastiveLoss, LogitsStayFp32UnderBf16Autocast) {
  torch::manual_seed(3);
  const auto a = torch::nn::functional::normalize(torch::randn({8, 32}));
  const auto b = torch::nn::functional::normalize(torch::randn({8, 32}));
  const auto scale = torch::tensor(4.6052f).exp();  // CLIP's cap: 100
  const auto fp32 = bt::model::contrastive_ce(a, b, scale);
  at::Tensor under_autocast;
  {
    bt::kernels::AutocastScope bf16(true, torch::kCPU);
    under_autocast = bt::model::contrastive_ce(a, b, scale);
    // What the loss would be with the matmul in bf16 (as autocast runs it): visibly different.
    const auto labels = torch::arange(8, torch::kLong);
    const auto bf16_loss = torch::nn::functional::cross_entropy(torch::matmul(a, b.t()) * scale, labels);
    EXPECT_GT(std::abs(bf16_loss.item<float>() - fp32.item<float>()), 1e-3);
  }
  EXPECT_EQ(under_autocast.scalar_type(), torch::kFloat);
  EXPECT_NEAR(under_autocast.item<float>(), fp32.item<float>(), 1e-6);
  EXPECT_FALSE(bt::kernels::AutocastState::current().cpu) << "autocast is off again after the scope";
}

// Label smoothing e: each row's loss is (1 - e) * CE + e * mean over the row's classes of -log softmax (the closed
// form of a target with 1 - e + e / N on the true pair and e / N elsewhere).
TEST(ContrastiveLoss, LabelSmoothingIsTheClosedForm) {
  torch::manual_seed(12);
  const auto a = torch::nn::functional::normalize(torch::randn({6, 8}), torch::nn::functional::NormalizeFuncOptions().dim(-1));
  const auto b = torch::nn::functional::normalize(torch::randn({6, 8}), torch::nn::functional::NormalizeFuncOptions().dim(-1));
  const auto scale = torch::tensor(7.0);
  const double e = 0.2;
  const auto log_p = torch::log_softmax(torch::matmul(a, b.t()).to(torch::kDouble) * 7.0, 1);
  const double ce = -log_p.diagonal().mean().item<double>();
  const double uniform = -log_p.mean().item<double>();
  EXPECT_NEAR(bt::model::contrastive_ce(a, b, scale, e).item<double>(), (1 - e) * ce + e * uniform, 1e-5);
  EXPECT_NEAR(bt::model::contrastive_ce(a, b, scale).item<double>(), ce, 1e-5);
}
