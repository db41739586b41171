#include "train/torch/optim.h"

#include <cmath>

#include "common/error.h"
#include "model/bridgetower.h"

namespace bt::train {

AdamW::AdamW(std::vector<Param> params, AdamWOptions opt)
    : params_(std::move(params)), state_(params_.size()), opt_(opt) {}

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
  for (size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i].tensor;
    const auto& g = p.grad();
    if (!g.defined()) continue;
    State& s = state_[i];
    if (!s.exp_avg.defined()) {
      s.exp_avg = torch::zeros_like(p, torch::MemoryFormat::Preserve);
      s.exp_avg_sq = torch::zeros_like(p, torch::MemoryFormat::Preserve);
    }
    s.step += 1;
    const double wd = params_[i].decay ? opt_.weight_decay : 0.0;
    if (wd != 0.0) p.mul_(1.0 - lr * wd);
    s.exp_avg.mul_(opt_.beta1).add_(g, 1.0 - opt_.beta1);
    s.exp_avg_sq.mul_(opt_.beta2).addcmul_(g, g, 1.0 - opt_.beta2);
    const double bc1 = 1.0 - std::pow(opt_.beta1, static_cast<double>(s.step));
    const double bc2 = 1.0 - std::pow(opt_.beta2, static_cast<double>(s.step));
    const double step_size = lr / bc1;
    auto denom = (s.exp_avg_sq.sqrt() / std::sqrt(bc2)).add_(opt_.eps);
    p.addcdiv_(s.exp_avg, denom, -step_size);
  }
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

AdamW make_adamw(torch::nn::Module& model, AdamWOptions opt) {
  auto groups = model::adamw_param_groups(model);
  std::vector<AdamW::Param> params;
  for (size_t i = 0; i < groups.decay.size(); ++i) params.push_back({groups.decay_names[i], groups.decay[i], true});
  for (size_t i = 0; i < groups.no_decay.size(); ++i)
    params.push_back({groups.no_decay_names[i], groups.no_decay[i], false});
  return AdamW(std::move(params), opt);
}

double clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> norms;
  for (const auto& p : params)
    if (p.grad().defined()) norms.push_back(p.grad().detach().norm(2).to(torch::kFloat32));
  if (norms.empty()) return 0.0;
  const auto total = torch::stack(norms).norm(2);
  const double total_v = total.item<double>();
  if (max_norm > 0) {
    const double coef = max_norm / (total_v + 1e-6);
    if (coef < 1.0)
      for (const auto& p : params)
        if (p.grad().defined()) p.grad().mul_(coef);
  }
  return total_v;
}

}  // namespace bt::train
