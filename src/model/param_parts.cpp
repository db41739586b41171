#include "model/param_parts.h"

#include <cmath>
#include <cstdlib>

namespace bt::model {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// The block index after `prefix` ("resblocks." -> 3 for "resblocks.3.mlp..."), or -1.
int block_after(const std::string& name, const std::string& prefix) {
  if (!starts_with(name, prefix)) return -1;
  const char* digits = name.c_str() + prefix.size();
  char* end = nullptr;
  const long i = std::strtol(digits, &end, 10);
  return end != digits && *end == '.' && i >= 0 ? static_cast<int>(i) : -1;
}

}  // namespace

ParamPlace param_place(const std::string& name, const BridgeTowerConfig& c) {
  const std::string vision = "bridgetower.vision_model.visual.", text = "bridgetower.text_model.";
  if (starts_with(name, vision)) {
    const int depth = c.vision.num_hidden_layers;
    const std::string rest = name.substr(vision.size());
    if (const int i = block_after(rest, "transformer.resblocks."); i >= 0) return {ModelPart::kVision, i + 1, depth};
    if (starts_with(rest, "ln_post.")) return {ModelPart::kVision, depth + 1, depth};
    return {ModelPart::kVision, 0, depth};  // embeddings, ln_pre
  }
  if (starts_with(name, text)) {
    const int depth = c.text.num_hidden_layers;
    const std::string rest = name.substr(text.size());
    if (const int i = block_after(rest, "encoder.layer."); i >= 0) return {ModelPart::kText, i + 1, depth};
    if (starts_with(rest, "pooler.")) return {ModelPart::kText, depth + 1, depth};
    return {ModelPart::kText, 0, depth};  // embeddings
  }
  return {};
}

const char* part_name(ModelPart part) {
  switch (part) {
    case ModelPart::kVision: return "vision";
    case ModelPart::kText: return "text";
    default: return "cross_modal";
  }
}

double layer_decay_factor(const ParamPlace& place, double decay) {
  if (place.part == ModelPart::kCrossModal || decay == 1.0) return 1.0;
  return std::pow(decay, place.depth + 1 - place.layer);
}

}  // namespace bt::model
