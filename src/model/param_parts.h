// Where a parameter sits in BridgeTower, read from its (HF) name: the one place that maps names to the model's
// parts and depths, for per-part learning rates, layer-wise learning-rate decay and freezing by layers
// (train/torch/train_setup.cpp). Torch-free.
//   vision  bridgetower.vision_model.visual.*: layer 0 = embeddings and ln_pre, i + 1 = resblocks.i, depth + 1 = ln_post
//   text    bridgetower.text_model.*: layer 0 = embeddings, i + 1 = encoder.layer.i, depth + 1 = pooler
//   cross_modal  everything else (cross-modal layers, link towers, their poolers, the heads, logit_scale)
#pragma once
#include <string>

#include "model/config.h"

namespace bt::model {

enum class ModelPart { kVision, kText, kCrossModal };

struct ParamPlace {
  ModelPart part = ModelPart::kCrossModal;
  int layer = 0;  // see above; 0 in the cross-modal part
  int depth = 0;  // the tower's blocks; 0 in the cross-modal part
};

ParamPlace param_place(const std::string& name, const BridgeTowerConfig& c);

const char* part_name(ModelPart part);  // "vision", "text", "cross_modal"

// Layer-wise decay d (BEiT's): a tower's parameter learns at d^(depth + 1 - layer) of its part's rate (the
// embeddings least, the last block at d, what follows the blocks at 1); the cross-modal part at 1. d = 1: none.
double layer_decay_factor(const ParamPlace& place, double decay);

}  // namespace bt::model
