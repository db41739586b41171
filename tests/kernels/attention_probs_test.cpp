// kernels/attention_probs/attention_probs.h: the fused bf16 attention weights against the composite ops they
// replace -- values, dtypes, the dropped elements, the gradients of q and k, and the random stream after the call.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <string>

#include "kernels/attention_probs/attention_probs.h"

namespace bt::kernels {
namespace {

struct PathRun {
  torch::Tensor out, dq, dk, next_random;
  std::string grad_fn;
};

// One forward and backward of either path from the same seed; next_random: the generator's next draw after it.
PathRun run(bool fused, const torch::Tensor& q0, const torch::Tensor& k0, const torch::Tensor& mask, double p,
        const torch::Tensor& w) {
  auto q = q0.clone().requires_grad_(), k = k0.clone().requires_grad_();
  torch::manual_seed(11);
  auto out = fused ? attention_weights(q, k, mask, p, true) : attention_weights_composite(q, k, mask, p, true);
  PathRun r{out.detach(), {}, {}, torch::rand({4}), out.grad_fn() ? out.grad_fn()->name() : ""};
  (out.to(torch::kFloat) * w).sum().backward();
  r.dq = q.grad();
  r.dk = k.grad();
  return r;
}

// |a - b| within tol of the larger magnitude, elementwise (bf16 rounding of values that differ by float ulps).
void expect_close(const torch::Tensor& a, const torch::Tensor& b, double tol, const std::string& what) {
  ASSERT_EQ(a.scalar_type(), b.scalar_type()) << what;
  const auto af = a.to(torch::kFloat), bf = b.to(torch::kFloat);
  const auto scale = torch::maximum(af.abs(), bf.abs()).max().item<float>();
  EXPECT_LE((af - bf).abs().max().item<float>(), tol * scale) << what;
}

TEST(AttentionProbs, Bf16FusedMatchesTheCompositeOps) {
  // S = 45: whole 16-lane blocks and a tail; a mask row with masked keys; dropout on and off.
  torch::manual_seed(3);
  const auto q = (torch::randn({2, 3, 7, 64}) * 0.5).to(torch::kBFloat16);
  const auto k = (torch::randn({2, 3, 45, 64}) * 0.5).to(torch::kBFloat16);
  auto keep = torch::ones({2, 45});
  keep.index_put_({1, torch::indexing::Slice(30, 45)}, 0);
  const auto mask = ((1 - keep) * std::numeric_limits<float>::lowest()).view({2, 1, 1, 45});
  for (const bool masked : {false, true})
    for (const double p : {0.0, 0.2}) {
      const std::string what = std::string(masked ? "mask" : "no mask") + ", p " + std::to_string(p);
      const auto m = masked ? mask : torch::Tensor();
      const auto w = torch::randn({2, 3, 7, 45});
      const PathRun fused = run(true, q, k, m, p, w), composite = run(false, q, k, m, p, w);
      EXPECT_NE(fused.grad_fn.find("AttentionProbs"), std::string::npos) << what << ": " << fused.grad_fn;
      // the composite's dtypes: a float32 mask promotes the probabilities to float32
      ASSERT_EQ(fused.out.scalar_type(), masked ? torch::kFloat : torch::kBFloat16) << what;
      EXPECT_TRUE(torch::equal(fused.out.eq(0), composite.out.eq(0))) << what << ": other elements dropped or masked";
      expect_close(fused.out, composite.out, 1e-5, what + ": probabilities");  // bf16: equal
      EXPECT_NEAR(fused.out.to(torch::kFloat).sum(-1).mean().item<float>(), 1.0, p > 0 ? 0.1 : 0.02) << what;
      expect_close(fused.dq, composite.dq, 0.01, what + ": dq");  // two bf16 ulps of the largest
      expect_close(fused.dk, composite.dk, 0.01, what + ": dk");
      EXPECT_TRUE(torch::equal(fused.next_random, composite.next_random)) << what << ": a different random stream";
      if (masked) {  // masked keys: exactly zero, as exp underflows to 0 in the composite
        EXPECT_EQ(fused.out.index({1, torch::indexing::Slice(), torch::indexing::Slice(),
                                   torch::indexing::Slice(30, 45)})
                      .abs()
                      .max()
                      .item<float>(),
                  0.0f)
            << what;
      }
    }
}

TEST(AttentionProbs, Float32AndEvalStayOnTheirPaths) {
  torch::manual_seed(4);
  const auto q = torch::randn({1, 2, 5, 64}, torch::requires_grad()), k = torch::randn({1, 2, 9, 64});
  const auto f32 = attention_weights(q, k, {}, 0.1, true);
  EXPECT_EQ(f32.grad_fn()->name().find("AttentionProbs"), std::string::npos) << "float32 left torch's softmax";
  // eval: no dropout and no draw from the generator
  const auto qb = q.detach().to(torch::kBFloat16), kb = k.to(torch::kBFloat16);
  torch::manual_seed(9);
  const auto eval = attention_weights(qb, kb, {}, 0.1, false);
  const auto after = torch::rand({2});
  torch::manual_seed(9);
  EXPECT_TRUE(torch::equal(after, torch::rand({2}))) << "eval drew from the generator";
  expect_close(eval, attention_weights_composite(qb, kb, {}, 0.1, false), 1e-5, "eval");
}

}  // namespace
}  // namespace bt::kernels
