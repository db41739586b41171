#include "train/torch/param_setup.h"

#include <cmath>
#include <cstdio>

#include "common/error.h"
#include "model/lora.h"
#include "model/param_parts.h"

namespace bt::train {

namespace {

// A part's rate: its own flag when given (0 included: that part does not move), else --learning_rate; as a factor
// of --learning_rate (resolve_settings refused a positive part rate beside --learning_rate 0).
double part_factor(model::ModelPart part, const TrainOptions& o, const RunSettings& s) {
  const std::optional<double>& own = part == model::ModelPart::kVision ? o.vision_learning_rate
                                     : part == model::ModelPart::kText ? o.text_learning_rate
                                                                       : o.cross_modal_learning_rate;
  if (!own) return 1.0;
  return *own == 0 ? 0.0 : *own / s.learning_rate;
}

bool parts_differ(const TrainOptions& o) {
  return o.vision_learning_rate || o.text_learning_rate || o.cross_modal_learning_rate || o.layer_decay != 1.0;
}

}  // namespace

int apply_lora(model::BridgeTowerForContrastiveLearning& model, const TrainOptions& o, const std::string& base) {
  if (o.lora_rank <= 0) return 0;
  model::LoraSpec spec = model::lora_spec(o.lora_rank, o.lora_alpha, o.lora_dropout, o.lora_target_modules,
                                          o.lora_modules_to_save);
  spec.base_model_name_or_path = base;
  return model::add_lora(*model, spec);
}

int apply_freezing(model::BridgeTowerForContrastiveLearning& model, const TrainOptions& o) {
  int frozen = 0;
  if (o.freeze_vision_model) frozen += model::freeze_parameters(*model, model::kVisionTowerPrefix);
  if (o.freeze_text_model) frozen += model::freeze_parameters(*model, model::kTextTowerPrefix);
  if (o.freeze_text_pooler) frozen += model::freeze_parameters(*model, model::kTextPoolerPrefix);
  if (o.freeze_logit_scale) frozen += model::freeze_parameters(*model, "logit_scale");
  if (o.freeze_vision_layers <= 0 && o.freeze_text_layers <= 0) return frozen;
  for (auto& kv : model->named_parameters(true)) {
    const model::ParamPlace p = model::param_place(kv.key(), model->config());
    const bool below = (p.part == model::ModelPart::kVision && p.layer <= o.freeze_vision_layers) ||
                       (p.part == model::ModelPart::kText && p.layer <= o.freeze_text_layers);
    if (below && kv.value().requires_grad()) {
      kv.value().set_requires_grad(false);
      ++frozen;
    }
  }
  return frozen;
}

std::function<double(const std::string&)> lr_scales(const TrainOptions& o, const RunSettings& s,
                                                    const model::BridgeTowerConfig& c) {
  if (!parts_differ(o)) return {};
  return [o, s, c](const std::string& name) {
    const model::ParamPlace p = model::param_place(name, c);
    return part_factor(p.part, o, s) * model::layer_decay_factor(p, o.layer_decay);
  };
}

std::vector<std::pair<std::string, double>> part_lr_factors(const TrainOptions& o, const RunSettings& s) {
  if (!parts_differ(o)) return {};
  std::vector<std::pair<std::string, double>> out;
  for (auto part : {model::ModelPart::kVision, model::ModelPart::kText, model::ModelPart::kCrossModal})
    out.emplace_back(std::string("lr_") + model::part_name(part), part_factor(part, o, s));
  return out;
}

std::string lr_text(const TrainOptions& o, const RunSettings& s, double lr) {
  auto rate = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3e", v);
    return std::string(b);
  };
  const auto parts = part_lr_factors(o, s);
  if (parts.empty()) return "lr " + rate(lr);
  std::string out = "lr";
  for (const auto& [key, factor] : parts) {  // "lr_vision": "lr vision 2.000e-04"
    out += ' ';
    out.append(key, key.rfind("lr_", 0) == 0 ? 3 : 0, std::string::npos);
    out += ' ';
    out += rate(lr * factor);
  }
  return out;
}

void init_logit_scale(model::BridgeTowerForContrastiveLearning& model, const TrainOptions& o) {
  if (!o.logit_scale_init) return;
  if (!std::isfinite(*o.logit_scale_init)) fail("--logit_scale_init: ", *o.logit_scale_init, " is not a number");
  torch::NoGradGuard no_grad;
  model->logit_scale.fill_(*o.logit_scale_init);
}

void bound_logit_scale(model::BridgeTowerForContrastiveLearning& model, const TrainOptions& o) {
  if (o.logit_scale_max <= 0) return;
  torch::NoGradGuard no_grad;
  model->logit_scale.clamp_max_(std::log(o.logit_scale_max));
}

}  // namespace bt::train
