// model/grad_checkpoint.h: a checkpointed segment gives the gradients of the plain one (inputs and parameters,
// with dropout replayed), keeps no activations, and is plain when no gradient is wanted.
#include "model/grad_checkpoint.h"

#include <gtest/gtest.h>

namespace bt::model {
namespace {

struct Grads {
  torch::Tensor x, w, y;
};

// y = dropout(tanh(x w)) * 2, twice in a row, then a sum; gradients of x and w.
Grads run(bool checkpoint, uint64_t seed) {
  torch::manual_seed(seed);
  torch::Tensor w = torch::randn({6, 6}).requires_grad_(true);
  torch::Tensor x = torch::randn({4, 6}).requires_grad_(true);
  auto seg = [w](const Tensors& in) {
    return Tensors{torch::dropout(torch::tanh(in[0].matmul(w)), 0.5, /*train=*/true) * 2, in[0]};
  };
  torch::manual_seed(seed + 1);
  Tensors h = checkpoint ? checkpointed(seg, {x}) : seg({x});
  h = checkpoint ? checkpointed(seg, {h[0]}) : seg({h[0]});
  torch::Tensor y = h[0].sum() + 0.5 * h[1].sum();
  y.backward();
  return {x.grad(), w.grad(), y.detach()};
}

TEST(GradCheckpoint, SameGradientsWithDropoutReplayed) {
  const Grads a = run(false, 7), b = run(true, 7);
  EXPECT_TRUE(torch::allclose(a.y, b.y));
  EXPECT_TRUE(torch::allclose(a.x, b.x, 1e-6, 1e-6)) << (a.x - b.x).abs().max();
  EXPECT_TRUE(torch::allclose(a.w, b.w, 1e-6, 1e-6)) << (a.w - b.w).abs().max();
  EXPECT_GT(a.w.abs().sum().item<double>(), 0);
}

TEST(GradCheckpoint, KeepsOnlyTheInputs) {
  torch::Tensor x = torch::randn({3, 3}).requires_grad_(true);
  int calls = 0;
  auto seg = [&calls](const Tensors& in) {
    ++calls;
    return Tensors{in[0].exp()};
  };
  Tensors out = checkpointed(seg, {x});
  EXPECT_EQ(calls, 1);
  out[0].sum().backward();  // recomputes
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(torch::allclose(x.grad(), x.detach().exp()));
  {
    torch::NoGradGuard no_grad;
    checkpointed(seg, {x});
  }
  EXPECT_EQ(calls, 3);  // no autograd: one plain call, nothing to recompute
}

}  // namespace
}  // namespace bt::model
