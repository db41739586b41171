#include "model/grad_checkpoint.h"

#include "kernels/autocast.h"
#include "model/rng_state.h"

namespace bt::model {

namespace {

// The RNG state of a segment's forward: the CPU's, and the device's of its first CUDA input.
RngState rng_of(const Tensors& inputs) {
  for (const auto& t : inputs)
    if (t.defined() && t.is_cuda()) return RngState::save(t.device());
  return RngState::save(torch::kCPU);
}

struct Saved : torch::CustomClassHolder {
  Segment fn;
  RngState rng;
  kernels::AutocastState autocast;  // the forward's, re-applied while backward recomputes (on autograd's threads)
};

struct CheckpointFunction : torch::autograd::Function<CheckpointFunction> {
  // inputs as a TensorList: a std::vector argument would count as ONE non-tensor input, leaving the node
  // unconnected to the graph of its inputs.
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, c10::intrusive_ptr<Saved> saved,
                                                at::TensorList input_list) {
    const Tensors inputs = input_list.vec();
    saved->rng = rng_of(inputs);
    saved->autocast = kernels::AutocastState::current();
    ctx->save_for_backward(inputs);
    ctx->saved_data["segment"] = c10::IValue::make_capsule(saved);
    return saved->fn(inputs);  // a custom function's forward runs without autograd: nothing is kept
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = c10::static_intrusive_pointer_cast<Saved>(ctx->saved_data["segment"].toCapsule());
    Tensors inputs;
    for (const auto& t : ctx->get_saved_variables())
      inputs.push_back(t.defined() ? t.detach().requires_grad_(t.requires_grad()) : t);
    const RngState rng_after = rng_of(inputs);
    const kernels::AutocastState autocast_after = kernels::AutocastState::current();
    saved->rng.restore();
    saved->autocast.apply();
    Tensors outputs;
    {
      torch::AutoGradMode grad(true);
      outputs = saved->fn(inputs);
    }
    autocast_after.apply();
    rng_after.restore();
    Tensors outs, outs_grads;
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i].requires_grad() && grads[i].defined()) outs.push_back(outputs[i]), outs_grads.push_back(grads[i]);
    if (!outs.empty()) torch::autograd::backward(outs, outs_grads);  // the parameters' gradients accumulate here
    torch::autograd::variable_list result = {torch::Tensor()};  // the Saved argument
    for (const auto& t : inputs) result.push_back(t.defined() && t.requires_grad() ? t.grad() : torch::Tensor());
    return result;
  }
};

}  // namespace

Tensors checkpointed(const Segment& fn, const Tensors& inputs) {
  bool needs_grad = false;
  for (const auto& t : inputs) needs_grad = needs_grad || (t.defined() && t.requires_grad());
  if (!torch::GradMode::is_enabled() || !needs_grad) return fn(inputs);
  auto saved = c10::make_intrusive<Saved>();
  saved->fn = fn;
  return CheckpointFunction::apply(saved, at::TensorList(inputs));
}

}  // namespace bt::model
