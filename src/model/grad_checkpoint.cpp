#include "model/grad_checkpoint.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include "model/rng_state.h"

namespace bt::model {

namespace {

// libtorch 2.4 replaced the per-device autocast accessors by ones taking the device type.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define BT_AUTOCAST_BY_DEVICE_TYPE 1
#endif

// The autocast settings of the forward, re-applied while backward recomputes (backward runs on the autograd
// engine's threads, where the forward's thread-local settings are not set).
struct Autocast {
  bool cpu = false, cuda = false;
  at::ScalarType cpu_dtype = at::kBFloat16, cuda_dtype = at::kHalf;
  static Autocast now() {
    Autocast a;
#ifdef BT_AUTOCAST_BY_DEVICE_TYPE
    a.cpu = at::autocast::is_autocast_enabled(at::kCPU), a.cuda = at::autocast::is_autocast_enabled(at::kCUDA);
    a.cpu_dtype = at::autocast::get_autocast_dtype(at::kCPU), a.cuda_dtype = at::autocast::get_autocast_dtype(at::kCUDA);
#else
    a.cpu = at::autocast::is_cpu_enabled(), a.cuda = at::autocast::is_enabled();
    a.cpu_dtype = at::autocast::get_autocast_cpu_dtype(), a.cuda_dtype = at::autocast::get_autocast_gpu_dtype();
#endif
    return a;
  }
  void apply() const {
#ifdef BT_AUTOCAST_BY_DEVICE_TYPE
    at::autocast::set_autocast_dtype(at::kCPU, cpu_dtype), at::autocast::set_autocast_enabled(at::kCPU, cpu);
    at::autocast::set_autocast_dtype(at::kCUDA, cuda_dtype), at::autocast::set_autocast_enabled(at::kCUDA, cuda);
#else
    at::autocast::set_autocast_cpu_dtype(cpu_dtype), at::autocast::set_cpu_enabled(cpu);
    at::autocast::set_autocast_gpu_dtype(cuda_dtype), at::autocast::set_enabled(cuda);
#endif
  }
};

// The RNG state of a segment's forward: the CPU's, and the device's of its first CUDA input.
RngState rng_of(const Tensors& inputs) {
  for (const auto& t : inputs)
    if (t.defined() && t.is_cuda()) return RngState::save(t.device());
  return RngState::save(torch::kCPU);
}

struct Saved : torch::CustomClassHolder {
  Segment fn;
  RngState rng;
  Autocast autocast;
};

struct CheckpointFunction : torch::autograd::Function<CheckpointFunction> {
  // inputs as a TensorList: a std::vector argument would count as ONE non-tensor input, leaving the node
  // unconnected to the graph of its inputs.
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, c10::intrusive_ptr<Saved> saved,
                                                at::TensorList input_list) {
    const Tensors inputs = input_list.vec();
    saved->rng = rng_of(inputs);
    saved->autocast = Autocast::now();
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
    const Autocast autocast_after = Autocast::now();
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
