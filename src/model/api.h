// Torch-free entry points of bt_model for the CLI (so the command files need not include torch/torch.h).
#pragma once
#include <cstdint>
#include <string>

#include "model/config.h"

namespace bt::model {

// Parameters of the head model built from `c` (constructed on the meta device: nothing is allocated).
// head: contrastive | itm | mlm.
int64_t parameter_count(const BridgeTowerConfig& c, const std::string& head = "contrastive");

// A few lines describing the shapes of `c`.
std::string describe(const BridgeTowerConfig& c);

// Runs BridgeTowerForContrastiveLearning from `model_dir` in eval mode on the batch file `batch_path`
// (pixel_values F32 [B,3,S,S], input_ids and attention_mask integer [B,L]) and writes text_embeds,
// image_embeds, cross_embeds, logits and loss to `out_path` (safetensors, F32). max_model_bytes: as
// --max_model_bytes (model/memory_budget.h; 0: the machine's memory).
void forward_file(const std::string& model_dir, const std::string& batch_path, const std::string& out_path,
                  uint64_t max_model_bytes = 0);

// Torch intra-op threads (n <= 0: all cores); OpenBLAS, if loaded, is pinned to 1 thread so it does not
// oversubscribe on top of torch's pool.
void configure_torch_threads(int n);

}  // namespace bt::model
