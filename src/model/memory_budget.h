// The memory a model asks for, from config.json's shapes alone, checked before anything is allocated: a 1 KB
// config inside validate()'s bounds can still describe billions of parameters. Torch-free header (the count comes
// from the model built on the meta device: model/api.h parameter_count, so it is the model's own, not a formula).
//
// Contract:
//  - weights: every parameter of BridgeTowerForContrastiveLearning in float32 (4 bytes each), and the adapters a
//    folder's adapter_config.json adds (extra_parameters).
//  - training adds 3 more copies (the gradients, AdamW's exp_avg and exp_avg_sq): 16 bytes per parameter.
//  - activations, a lower bound: one batch of float pixels (batch x 3 x S^2) and the vision tower's hidden states
//    (batch x tokens x width), one per vision layer when training (autograd keeps them), two otherwise.
//  - check_model_memory() refuses, naming the estimate, its parts (the extra parameters and where they come from)
//    and the limit, when the total exceeds
//    `max_bytes` (--max_model_bytes) or, when that is 0, the machine's memory (common/machine_memory.h: MemAvailable,
//    the cgroup's and rlimits). The host's memory whatever --device: a model is built or loaded on the host, and a
//    run past it is killed by the kernel without a message; --max_model_bytes replaces the limit (a GPU run whose
//    optimizer state lives on the device, a machine with swap).
#pragma once
#include <cstdint>
#include <string>

#include "model/config.h"

namespace bt::model {

struct ModelBudget {
  bool training = false;
  int batch = 1;               // images per forward (the activations term)
  uint64_t max_bytes = 0;      // --max_model_bytes; 0: the machine's memory
  int64_t extra_parameters = 0;  // beside the config's: a folder's LoRA adapters (model/lora.h check_adapter_fits)
  std::string extra_what;        // where they come from, for the message ("DIR/adapter_config.json")
};

struct ModelMemory {
  int64_t parameters = 0;
  uint64_t weights = 0, optimizer = 0, activations = 0;
  uint64_t total() const { return weights + optimizer + activations; }
};

ModelMemory estimate_model_memory(const BridgeTowerConfig& c, const ModelBudget& b);

// Throws bt::Error naming `c.source` (or "the model" for a preset), the estimate and the limit (see above).
void check_model_memory(const BridgeTowerConfig& c, const ModelBudget& b);

}  // namespace bt::model
