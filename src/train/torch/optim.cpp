#include "train/torch/optim.h"

#include <cmath>
#include <optional>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/version.h>

#include <atomic>
#include <cstdio>

#include "common/error.h"
#include "kernels/cuda_ops.h"
#include "model/bridgetower.h"

namespace bt::train {

AdamW::AdamW(std::vector<Param> params, AdamWOptions opt)
    : params_(std::move(params)),
      state_(params_.size()),
      opt_(std::move(opt)),
      paths_(opt_.paths ? opt_.paths : std::make_shared<kernels::KernelPaths>()) {}

std::vector<torch::Tensor> AdamW::tensors() const {
  std::vector<torch::Tensor> out;
  for (const auto& p : params_) out.push_back(p.tensor);
  return out;
}

void AdamW::zero_grad() {
  for (auto& p : params_) {
    auto& g = p.tensor.mutable_grad();
    if (g.defined()) g = torch::Tensor();  // set_to_none, as torch >= 2.0 and HF do
  }
}

void AdamW::step(double lr) {
  torch::NoGradGuard no_grad;
  // Parameters with a gradient, grouped by what their update's scalars depend on (decay, step count): each group
  // is one multi-tensor (_foreach_) kernel per line of the update instead of one kernel per parameter per line.
  // On a GPU that is ~10 launches per group instead of ~10 per tensor (the large preset has ~1000 tensors); on the
  // CPU the _foreach_ ops run the same per-tensor ops as before, so results do not change by a bit.
  std::map<std::tuple<bool, int64_t, double>, std::vector<size_t>> groups;
  for (size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i].tensor;
    if (!p.grad().defined()) continue;
    State& s = state_[i];
    if (!s.exp_avg.defined()) {
      s.exp_avg = torch::zeros_like(p, torch::MemoryFormat::Preserve);
      s.exp_avg_sq = torch::zeros_like(p, torch::MemoryFormat::Preserve);
    }
    s.step += 1;
    groups[{params_[i].decay && opt_.weight_decay != 0.0, s.step, params_[i].lr_scale}].push_back(i);
  }
  for (const auto& [key, idx] : groups) {
    std::vector<torch::Tensor> p, g, m, v;
    for (size_t i : idx) {
      p.push_back(params_[i].tensor);
      g.push_back(params_[i].tensor.grad());
      m.push_back(state_[i].exp_avg);
      v.push_back(state_[i].exp_avg_sq);
    }
    const auto [decay, step, scale] = key;
    const double group_lr = lr * scale;
    if (fused_step(p, g, m, v, decay, step, group_lr)) continue;
    paths_->record(kernels::Kernel::kAdamW, kernels::KernelPath::kFallback);
    if (decay) at::_foreach_mul_(p, 1.0 - group_lr * opt_.weight_decay);
    at::_foreach_mul_(m, opt_.beta1);
    at::_foreach_add_(m, g, 1.0 - opt_.beta1);
    at::_foreach_mul_(v, opt_.beta2);
    at::_foreach_addcmul_(v, g, g, 1.0 - opt_.beta2);
    const double bc1 = 1.0 - std::pow(opt_.beta1, static_cast<double>(step));
    const double bc2 = 1.0 - std::pow(opt_.beta2, static_cast<double>(step));
    auto denom = at::_foreach_sqrt(v);
    at::_foreach_div_(denom, std::sqrt(bc2));
    at::_foreach_add_(denom, opt_.eps);
    at::_foreach_addcdiv_(p, m, denom, -group_lr / bc1);
  }
}

namespace {

// torch >= 2.0 registers a one-kernel AdamW (aten::_fused_adamw_, what torch.optim.AdamW(fused=True) and HF's
// default adamw_torch_fused run). It is looked up in the dispatcher at run time, not named in C++, so one source
// compiles against every libtorch (Debian's 1.13 has no such op) and a schema that ever differs from this
// signature turns the fused path off instead of failing the build.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
using OptTensor = std::optional<at::Tensor>;  // c10::optional became std::optional's (deprecated) alias in 2.4
#else
using OptTensor = c10::optional<at::Tensor>;
#endif
using FusedAdamWFn = void(at::TensorList, at::TensorList, at::TensorList, at::TensorList, at::TensorList,
                          at::TensorList, double, double, double, double, double, bool, bool,
                          const OptTensor&, const OptTensor&);

const c10::TypedOperatorHandle<FusedAdamWFn>* fused_adamw_op() {
  static const auto op = []() -> std::optional<c10::TypedOperatorHandle<FusedAdamWFn>> {
    auto h = c10::Dispatcher::singleton().findOp({"aten::_fused_adamw_", ""});
    if (!h) return std::nullopt;
    try {
      return h->typed<FusedAdamWFn>();
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }();
  return op ? &*op : nullptr;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

bool AdamW::fused_available() { return fused_adamw_op() != nullptr; }

bool AdamW::fused_step(const std::vector<torch::Tensor>& p, const std::vector<torch::Tensor>& g,
                       const std::vector<torch::Tensor>& m, const std::vector<torch::Tensor>& v, bool decay,
                       int64_t step, double lr) {
  if (!opt_.fused || p.empty()) return false;
  const bool inject = kernels::fused_ops_fail_injected();  // BRIDGETUNE_FUSED_OPS=fail: the path anywhere, failing
  const auto* op = fused_adamw_op();
  if (!op && !inject) return false;
  for (size_t i = 0; i < p.size() && !inject; ++i)  // the kernel's contract: CUDA, one floating dtype per set
    if (!p[i].is_cuda() || !g[i].is_cuda() || g[i].scalar_type() != p[i].scalar_type() ||
        !at::isFloatingType(p[i].scalar_type()))
      return false;
  // The kernel reads each parameter's step count from a device tensor (already incremented, as torch's
  // _fused_adamw does before the call); every tensor of a group shares the step, hence one scalar per decay
  // group, made once and refilled: no allocation per step.
  torch::Tensor& t = step_tensor_[decay ? 1 : 0];
  if (!t.defined() || t.device() != p[0].device())
    t = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(p[0].device()));
  t.fill_(static_cast<double>(step));
  const std::vector<torch::Tensor> steps(p.size(), t);
  try {
    if (inject) fail("simulated kernel failure (BRIDGETUNE_FUSED_OPS=fail)");
    op->call(p, g, m, v, /*max_exp_avg_sqs=*/{}, steps, lr, opt_.beta1, opt_.beta2,
             decay ? opt_.weight_decay : 0.0, opt_.eps, /*amsgrad=*/false, /*maximize=*/false, OptTensor(),
             OptTensor());
  } catch (const std::exception& e) {
    // The kernel checks its inputs before it writes anything, so the _foreach_ path can take this step over.
    // One line, then the composite path for the rest of the run (a fast path must never cost the run).
    std::fprintf(stderr, "bridgetune: fused AdamW kernel failed (%s); using the _foreach_ path from now on\n",
                 first_line(e.what()).c_str());
    opt_.fused = false;
    paths_->record(kernels::Kernel::kAdamW, kernels::KernelPath::kFastFailed);
    return false;
  }
  paths_->record(kernels::Kernel::kAdamW, kernels::KernelPath::kFast);
  return true;
}

std::vector<std::pair<std::string, torch::Tensor>> AdamW::state_tensors() const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (size_t i = 0; i < params_.size(); ++i) {
    const State& s = state_[i];
    if (!s.exp_avg.defined()) continue;
    out.emplace_back("exp_avg/" + params_[i].name, s.exp_avg.detach().to(torch::kCPU, torch::kFloat32));
    out.emplace_back("exp_avg_sq/" + params_[i].name, s.exp_avg_sq.detach().to(torch::kCPU, torch::kFloat32));
    out.emplace_back("step/" + params_[i].name, torch::tensor({s.step}, torch::kInt64));
  }
  return out;
}

void AdamW::load_state(const std::map<std::string, torch::Tensor>& state, const std::string& what) {
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::string& n = params_[i].name;
    auto m = state.find("exp_avg/" + n), v = state.find("exp_avg_sq/" + n), t = state.find("step/" + n);
    if (m == state.end() && v == state.end() && t == state.end()) {
      state_[i] = State{};  // the parameter had no gradient yet when the checkpoint was written
      continue;
    }
    if (m == state.end() || v == state.end() || t == state.end())
      fail(what, ": optimizer state of '", n, "' is incomplete");
    const auto& p = params_[i].tensor;
    if (m->second.sizes() != p.sizes() || v->second.sizes() != p.sizes())
      fail(what, ": optimizer state of '", n, "' has shape ", c10::str(m->second.sizes()), ", the parameter ",
           c10::str(p.sizes()));
    state_[i].exp_avg = m->second.to(p.options()).clone();
    state_[i].exp_avg_sq = v->second.to(p.options()).clone();
    state_[i].step = t->second.to(torch::kInt64).reshape({-1})[0].item<int64_t>();
  }
}

AdamW make_adamw(torch::nn::Module& model, AdamWOptions opt,
                 const std::function<double(const std::string&)>& lr_scale_of) {
  auto groups = model::adamw_param_groups(model);
  std::vector<AdamW::Param> params;
  auto scale = [&](const std::string& name) { return lr_scale_of ? lr_scale_of(name) : 1.0; };
  for (size_t i = 0; i < groups.decay.size(); ++i)
    params.push_back({groups.decay_names[i], groups.decay[i], true, scale(groups.decay_names[i])});
  for (size_t i = 0; i < groups.no_decay.size(); ++i)
    params.push_back({groups.no_decay_names[i], groups.no_decay[i], false, scale(groups.no_decay_names[i])});
  opt.fused = opt.fused && kernels::fused_ops_enabled();
  return AdamW(std::move(params), opt);
}

double clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads;
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.grad().detach());
  if (grads.empty()) return 0.0;
  // One multi-tensor kernel per step instead of one norm per parameter (what torch's clip_grad_norm_ does too).
  std::vector<torch::Tensor> norms = at::_foreach_norm(grads, 2);
  for (auto& n : norms) n = n.to(torch::kFloat32);
  const auto total = torch::stack(norms).norm(2);
  const double total_v = total.item<double>();
  if (max_norm > 0) {
    const double coef = max_norm / (total_v + 1e-6);
    if (coef < 1.0) at::_foreach_mul_(grads, coef);
  }
  return total_v;
}

}  // namespace bt::train
