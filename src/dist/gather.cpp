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

}  // namespace bt::dist
