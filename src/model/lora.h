// LoRA adapters on the model (model/lora_config.h has the settings, names and PEFT's files):
//  - add_lora() attaches A (PEFT's init: uniform in +-1/sqrt(in)) and B (zeros) to every matching Linear, so the
//    model's outputs are unchanged until a step, and freezes every parameter but the adapters and modules_to_save.
//  - merge_lora() folds each update into its weight (W += scaling * B A) and removes the adapters: a plain model
//    with the same outputs (to rounding), as PEFT's merge_and_unload().
//  - save_adapter() / load_adapter_weights() / apply_adapter(): adapter_config.json + adapter_model.safetensors.
// The base weights are the model's own: save_pretrained() and load_weights() skip the adapters' tensors.
#pragma once
#include <string>

#include "model/bridgetower.h"
#include "model/lora_config.h"

namespace bt::model {

// Returns the number of Linear layers adapted; throws naming the targets that match no Linear layer.
int add_lora(PretrainedModel& m, const LoraSpec& s);
bool has_lora(PretrainedModel& m);
void merge_lora(PretrainedModel& m);

void save_adapter(PretrainedModel& m, const LoraSpec& s, const std::string& dir);
// Copies adapter_model.safetensors' tensors into the adapters (and modules_to_save) m already has; every adapter
// must be in the file with its shape.
void load_adapter_weights(PretrainedModel& m, const std::string& dir);
// Whether dir holds adapter_config.json.
bool has_adapter(const std::string& dir);
// read_adapter_config + add_lora + load_adapter_weights: a folder's adapter on a model holding its base weights.
LoraSpec apply_adapter(PretrainedModel& m, const std::string& dir);

// A folder's adapter checked against config `c` before anything is allocated (a 1 KB adapter_config.json with
// r: 65536 would otherwise take GBs before any check), in this order: its config (read_adapter_config: r a whole
// number in range), the adapters it adds (add_lora on the meta device: names and counts), the model's memory with
// them under `budget` (model/memory_budget.h: check_model_memory, the adapters named), and adapter_model.safetensors'
// header (every adapter and saved module with its shape and a floating-point dtype, nothing else). Returns the
// adapters' parameter count. load_adapter_weights checks the same header before it copies.
int64_t check_adapter_fits(const BridgeTowerConfig& c, const std::string& dir, ModelBudget budget);

}  // namespace bt::model
