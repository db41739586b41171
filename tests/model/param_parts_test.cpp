// model/param_parts.h against the names of a real checkpoint (the tiny fixture made by HF transformers): every
// tensor gets the part and depth its name says, and layer-wise decay scales by depth.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "checkpoint/safetensors.h"
#include "fixture_dir.h"
#include "model/config.h"
#include "model/param_parts.h"

namespace bt::model {
namespace {

TEST(ParamParts, EveryFixtureTensorHasThePartAndDepthOfItsName) {
  const BridgeTowerConfig c = load_config(std::string(BT_FIXTURE_DIR) + "/config.json");
  const auto st = bt::checkpoint::SafeTensors::open(std::string(BT_FIXTURE_DIR) + "/model.safetensors");
  std::map<std::string, int> per_part;
  std::map<int, int> vision_layers, text_layers;
  for (const auto& t : st.tensors()) {
    const ParamPlace p = param_place(t.name, c);
    ++per_part[part_name(p.part)];
    if (p.part == ModelPart::kVision) {
      EXPECT_EQ(t.name.rfind("bridgetower.vision_model.", 0), 0u) << t.name;
      EXPECT_EQ(p.depth, c.vision.num_hidden_layers);
      ++vision_layers[p.layer];
    } else if (p.part == ModelPart::kText) {
      EXPECT_EQ(t.name.rfind("bridgetower.text_model.", 0), 0u) << t.name;
      EXPECT_EQ(p.depth, c.text.num_hidden_layers);
      ++text_layers[p.layer];
    } else {
      EXPECT_EQ(t.name.find("vision_model"), std::string::npos) << t.name;
      EXPECT_EQ(t.name.find("text_model"), std::string::npos) << t.name;
    }
  }
  EXPECT_GT(per_part["cross_modal"], 0);
  // Layers 0 (embeddings) .. depth + 1 (after the blocks), every block present with the same tensor count.
  ASSERT_EQ(vision_layers.size(), size_t(c.vision.num_hidden_layers + 2));
  ASSERT_EQ(text_layers.size(), size_t(c.text.num_hidden_layers + 2));
  for (int i = 2; i <= c.vision.num_hidden_layers; ++i) EXPECT_EQ(vision_layers[i], vision_layers[1]) << i;
  for (int i = 2; i <= c.text.num_hidden_layers; ++i) EXPECT_EQ(text_layers[i], text_layers[1]) << i;
  const ParamPlace block = param_place("bridgetower.vision_model.visual.transformer.resblocks.0.attn.in_proj_weight", c);
  EXPECT_EQ(block.layer, 1);
  EXPECT_EQ(param_place("bridgetower.text_model.encoder.layer.1.output.dense.weight", c).layer, 2);
  EXPECT_EQ(param_place("bridgetower.text_model.pooler.dense.weight", c).layer, c.text.num_hidden_layers + 1);
}

TEST(ParamParts, LayerDecayScalesByDepth) {
  const ParamPlace embeddings{ModelPart::kText, 0, 4}, last{ModelPart::kText, 4, 4}, after{ModelPart::kText, 5, 4};
  EXPECT_DOUBLE_EQ(layer_decay_factor(embeddings, 0.5), std::pow(0.5, 5));
  EXPECT_DOUBLE_EQ(layer_decay_factor(last, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(layer_decay_factor(after, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(layer_decay_factor(ParamPlace{}, 0.5), 1.0);  // cross-modal
  EXPECT_DOUBLE_EQ(layer_decay_factor(embeddings, 1.0), 1.0);
}

}  // namespace
}  // namespace bt::model
