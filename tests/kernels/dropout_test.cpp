// kernels/dropout/dropout.h: the fused CPU dropout keeps 1 - p of the elements, scales them by 1 / (1 - p), follows
// torch.manual_seed (not the thread count), uses the same mask in backward, and rounds bf16 as torch does.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "kernels/dropout/dropout.h"

namespace bt::kernels {
namespace {

TEST(Dropout, KeepsOneMinusPScaledAndFollowsTheSeedNotTheThreads) {
  const double p = 0.1;
  const auto x = torch::ones({1 << 20});
  const int threads = at::get_num_threads();
  torch::manual_seed(5);
  const auto a = bt::kernels::dropout(x, p, true);
  const auto b = bt::kernels::dropout(x, p, true);
  at::set_num_threads(1);
  torch::manual_seed(5);
  const auto a1 = bt::kernels::dropout(x, p, true);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(a, a1)) << "the mask depends on the thread count or not on torch's seed";
  EXPECT_FALSE(torch::equal(a, b)) << "two calls drew the same mask";
  const double dropped = a.eq(0).to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(dropped, p, 0.002);
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  EXPECT_TRUE(torch::equal(a.masked_select(a.ne(0)), torch::full({a.ne(0).sum().item<int64_t>()}, scale)));
  // Two masks are independent: both drop an element about p^2 of the time.
  const double both = (a.eq(0) & b.eq(0)).to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(both, p * p, 0.002);
}

TEST(Dropout, BackwardUsesTheForwardMaskAndBf16RoundsAsTorch) {
  torch::manual_seed(0);
  const double p = 0.3;
  const auto x = (torch::rand({64, 333}) + 0.5).requires_grad_();
  const auto y = bt::kernels::dropout(x, p, true);
  (y * 3).sum().backward();
  const auto expected = y.detach().ne(0).to(torch::kFloat) * static_cast<float>(1.0 / (1.0 - p)) * 3;
  EXPECT_TRUE(torch::allclose(x.grad(), expected, 0, 1e-6));
  // bf16: the kept values are torch's bf16 rounding of x * scale, bit for bit, for every bf16 value (NaNs,
  // infinities, subnormals, ties, overflow to infinity); dropped ones are +0.
  const auto every_bf16 = torch::arange(0, 65536, torch::kInt32).to(torch::kInt16).view(torch::kBFloat16);
  const auto xb = torch::cat({every_bf16, every_bf16, every_bf16});
  const auto yb = bt::kernels::dropout(xb, p, true);
  ASSERT_EQ(yb.scalar_type(), torch::kBFloat16);
  const auto want = (xb.to(torch::kFloat) * static_cast<float>(1.0 / (1.0 - p))).to(torch::kBFloat16);
  const auto yb_bits = yb.view(torch::kInt16), want_bits = want.view(torch::kInt16);
  const auto kept = yb_bits.ne(0);  // +0 is a dropped element or a kept +0, whose rounding is +0 too
  // NaN: any NaN (torch's scalar conversion gives 0x7FC0, its AVX-512 one 0xFFFF).
  const auto number = kept & want.isnan().logical_not();
  EXPECT_TRUE(torch::equal(yb_bits.masked_select(number), want_bits.masked_select(number)));
  EXPECT_TRUE(yb.masked_select(kept & want.isnan()).isnan().all().item<bool>());
  EXPECT_GT((kept & want.isnan()).sum().item<int64_t>(), 100);
  EXPECT_NEAR(yb_bits.eq(0).to(torch::kDouble).mean().item<double>(), p, 0.03);
}

TEST(Dropout, IdentityOutsideTrainingAndTorchsOwnElsewhere) {
  const auto x = torch::randn({100});
  EXPECT_TRUE(bt::kernels::dropout(x, 0.5, false).is_same(x));
  EXPECT_TRUE(bt::kernels::dropout(x, 0.0, true).is_same(x));
  EXPECT_TRUE(torch::equal(bt::kernels::dropout(x.to(torch::kDouble), 1.0, true), torch::zeros({100}, torch::kDouble)));
}

}  // namespace
}  // namespace bt::kernels
