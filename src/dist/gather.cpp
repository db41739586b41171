#include "dist/gather.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

namespace bt::dist {
namespace {

struct GatherWithGrad : public torch::autograd::Function<GatherWithGrad> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, Group* group) {
    ctx->saved_data["group"] = reinterpret_cast<int64_t>(group);
    ctx->saved_data["rows"] = x.size(0);
    return group->all_gather_cat(x);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto* group = reinterpret_cast<Group*>(ctx->saved_data["group"].toInt());
    const int64_t rows = ctx->saved_data["rows"].toInt();
    at::Tensor g = grads[0].contiguous().clone();
    group->all_reduce_sum_(g);
    return {g.narrow(0, group->rank() * rows, rows), at::Tensor()};
  }
};

}  // namespace

at::Tensor gather_with_grad(Group& group, const at::Tensor& x) {
  if (!group.distributed()) return x;
  return GatherWithGrad::apply(x, &group);
}

at::Tensor contrastive_ce(const at::Tensor& a, const at::Tensor& b, const at::Tensor& logit_scale) {
  const at::Tensor logits = at::matmul(a, b.t()) * logit_scale.exp();
  const at::Tensor labels = at::arange(a.size(0), at::TensorOptions().dtype(at::kLong).device(a.device()));
  return at::cross_entropy_loss(logits, labels);
}

at::Tensor bridgetower_contrastive_loss(Group& group, const at::Tensor& text, const at::Tensor& image,
                                        const at::Tensor& cross, const at::Tensor& logit_scale, bool gather) {
  const bool g = gather && group.distributed();
  const at::Tensor t = g ? gather_with_grad(group, text) : text;
  const at::Tensor i = g ? gather_with_grad(group, image) : image;
  const at::Tensor c = g ? gather_with_grad(group, cross) : cross;
  return (contrastive_ce(t, i, logit_scale) + contrastive_ce(t, c, logit_scale) + contrastive_ce(i, c, logit_scale)) /
         3.0;
}

}  // namespace bt::dist
