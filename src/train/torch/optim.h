// AdamW with per-parameter state addressable by parameter name, so optimizer state checkpoints are plain
// safetensors (exp_avg/<name>, exp_avg_sq/<name>, step) that survive a change of process or library version.
// The update is torch.optim.AdamW's (decoupled weight decay, bias correction, amsgrad off) exactly:
//   p *= 1 - lr * wd;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  t += 1
//   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// Groups as the HF Trainer builds them (weight decay on all but biases and LayerNorm weights), each parameter's
// learning rate the step's times its lr_scale (per-part rates, layer-wise decay: train_setup.cpp decides them).
// Parameters without a gradient in a step are skipped (their state does not advance), as torch does.
// Update kernels: on CUDA with a libtorch >= 2.0 one fused kernel per group (aten::_fused_adamw_, torch's own
// fused=True AdamW); elsewhere multi-tensor _foreach_ ops (bit-identical to the per-tensor update on the CPU).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/registry.h"

namespace bt::train {

struct AdamWOptions {
  double lr = 5e-5;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool fused = true;  // CUDA parameters: aten::_fused_adamw_ where the libtorch has it (else the _foreach_ path)
  // The run's record of the update path taken (kernels/registry.h, Kernel::kAdamW); null: the optimizer's own.
  std::shared_ptr<kernels::KernelPaths> paths;
};

class AdamW {
 public:
  struct Param {
    std::string name;
    torch::Tensor tensor;
    bool decay;
    double lr_scale = 1.0;  // this parameter's learning rate: the step's lr times this
  };
  AdamW(std::vector<Param> params, AdamWOptions opt);

  void step(double lr);  // lr for this step (the schedule's value)
  void zero_grad();
  const std::vector<Param>& params() const { return params_; }
  std::vector<torch::Tensor> tensors() const;
  static bool fused_available();  // this build's libtorch has at::_fused_adamw_
  // The update path this optimizer's steps took: "fused", "foreach", "foreach (fused kernel failed)" (the fused
  // kernel threw once: one line on stderr, then _foreach_ for the rest of the run) or "none".
  std::string path_used() const { return paths_->name(kernels::Kernel::kAdamW); }

  // "exp_avg/<name>", "exp_avg_sq/<name>" (F32), "step/<name>" (I64 scalar) of every parameter with state.
  std::vector<std::pair<std::string, torch::Tensor>> state_tensors() const;
  // Restores state saved by state_tensors(); a parameter missing from `state` is an error naming it.
  void load_state(const std::map<std::string, torch::Tensor>& state, const std::string& what);

 private:
  struct State {
    torch::Tensor exp_avg, exp_avg_sq;
    int64_t step = 0;
  };
  // One group's update in the fused kernel; false (nothing done) where it does not apply.
  bool fused_step(const std::vector<torch::Tensor>& p, const std::vector<torch::Tensor>& g,
                  const std::vector<torch::Tensor>& m, const std::vector<torch::Tensor>& v, bool decay, int64_t step,
                  double lr);
  std::vector<Param> params_;
  std::vector<State> state_;
  AdamWOptions opt_;
  std::shared_ptr<kernels::KernelPaths> paths_;  // opt_.paths, or a record of its own
  torch::Tensor step_tensor_[2];  // the fused kernel's step count per decay group, on the parameters' device
};

// HF-style groups from the model's trainable parameters (model::adamw_param_groups decides decay by name);
// lr_scale_of(name), when given, each parameter's lr_scale.
AdamW make_adamw(torch::nn::Module& model, AdamWOptions opt,
                 const std::function<double(const std::string&)>& lr_scale_of = {});

// Total L2 norm of all gradients, scaled down in place to max_norm when above it (clip_grad_norm_'s
// semantics: coefficient max_norm / (total + 1e-6), clamped to 1). max_norm <= 0: only measures.
double clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm);

}  // namespace bt::train
