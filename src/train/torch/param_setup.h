// What each parameter trains at, decided once when the run is built: frozen or not (--freeze_vision_model,
// --freeze_text_model, --freeze_text_pooler, --freeze_vision_layers N, --freeze_text_layers N,
// --freeze_logit_scale), its learning rate relative to --learning_rate (--vision_learning_rate,
// --text_learning_rate, --cross_modal_learning_rate, --layer_decay; model/param_parts.h says where a parameter
// sits), and the logit scale's start and bound (--logit_scale_init, --logit_scale_max).
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/bridgetower.h"
#include "train/run_settings.h"
#include "train/trainer.h"

namespace bt::train {

// --lora_rank > 0: adapters on the --lora_target_modules (model/lora.h), everything else frozen but the
// --lora_modules_to_save; adapter_config.json names `base` (the --model_name_or_path, else the output folder, whose
// model.safetensors will hold the base). Returns the number of Linear layers adapted (0 without LoRA).
int apply_lora(model::BridgeTowerForContrastiveLearning& model, const TrainOptions& o, const std::string& base);

// Sets requires_grad = false on what the options freeze; returns how many tensors that is.
int apply_freezing(model::BridgeTowerForContrastiveLearning& model, const TrainOptions& o);

// Each parameter's learning rate as a factor of the step's (AdamW::Param::lr_scale); empty when every factor is 1.
std::function<double(const std::string&)> lr_scales(const TrainOptions& o, const RunSettings& s,
                                                    const model::BridgeTowerConfig& c);

// ("lr_vision", factor), ("lr_text", ...), ("lr_cross_modal", ...): each part's rate as a factor of the step's (its
// top layer's, under layer decay), for the log; empty when the parts share --learning_rate.
std::vector<std::pair<std::string, double>> part_lr_factors(const TrainOptions& o, const RunSettings& s);

// The rates the parameter groups train at, at the step's base rate `lr`, for the progress line: "lr 1.000e-04", or
// with per-part rates each part's (its top layer's, under --layer_decay) -- never a base rate no group uses.
std::string lr_text(const TrainOptions& o, const RunSettings& s, double lr);

// --logit_scale_init on a run that is not resumed.
void init_logit_scale(model::BridgeTowerForContrastiveLearning& model, const TrainOptions& o);

// --logit_scale_max: exp(logit_scale) clamped to it after an optimizer step (CLIP's rule; a no-op when unset).
void bound_logit_scale(model::BridgeTowerForContrastiveLearning& model, const TrainOptions& o);

}  // namespace bt::train
