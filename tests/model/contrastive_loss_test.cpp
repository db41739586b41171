// model/contrastive_loss.h: the similarity logits stay fp32 under bf16 autocast (bf16 would quantise a logit of
// ~14-100 to steps of 0.06-0.5 before the softmax; the bf16 demo's retrieval lost a fifth of its R@1 to it).
#include "model/contrastive_loss.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "model/autocast.h"

TEST(ContrastiveLoss, LogitsStayFp32UnderBf16Autocast) {
  torch::manual_seed(3);
  const auto a = torch::nn::functional::normalize(torch::randn({8, 32}));
  const auto b = torch::nn::functional::normalize(torch::randn({8, 32}));
  const auto scale = torch::tensor(4.6052f).exp();  // CLIP's cap: 100
  const auto fp32 = bt::model::contrastive_ce(a, b, scale);
  at::Tensor under_autocast;
  {
    bt::model::AutocastScope bf16(true, torch::kCPU);
    under_autocast = bt::model::contrastive_ce(a, b, scale);
    // What the loss would be with the matmul in bf16 (as autocast runs it): visibly different.
    const auto labels = torch::arange(8, torch::kLong);
    const auto bf16_loss = torch::nn::functional::cross_entropy(torch::matmul(a, b.t()) * scale, labels);
    EXPECT_GT(std::abs(bf16_loss.item<float>() - fp32.item<float>()), 1e-3);
  }
  EXPECT_EQ(under_autocast.scalar_type(), torch::kFloat);
  EXPECT_NEAR(under_autocast.item<float>(), fp32.item<float>(), 1e-6);
  EXPECT_FALSE(bt::model::AutocastState::current().cpu) << "autocast is off again after the scope";
}
