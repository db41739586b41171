// bt_model_config: HF config.json parsing, presets, write-back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "fixture_dir.h"
#include "model/config.h"

using namespace bt::model;

TEST(ModelConfig, ParsesReferenceFixture) {
  auto c = load_config(std::string(BT_FIXTURE_DIR) + "/config.json");
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.num_hidden_layers, 2);
  EXPECT_EQ(c.contrastive_hidden_size, 32);
  EXPECT_EQ(c.text.vocab_size, 1000);
  EXPECT_EQ(c.text.num_hidden_layers, 3);
  EXPECT_EQ(c.text.max_position_embeddings, 64);
  EXPECT_EQ(c.vision.image_size, 64);
  EXPECT_EQ(c.vision.patch_size, 16);
  EXPECT_TRUE(c.vision.share_layernorm);
  EXPECT_EQ(c.link_tower_type, "add");
}

TEST(ModelConfig, WriteBackKeepsHfFieldsAndRoundTrips) {
  auto c = load_config(std::string(BT_FIXTURE_DIR) + "/config.json");
  auto path = (std::filesystem::temp_directory_path() / ("bt_cfg_" + std::to_string(getpid()))).string();
  save_config(c, path);
  auto j = nlohmann::json::parse(std::ifstream(path));
  EXPECT_EQ(j["model_type"], "bridgetower");
  EXPECT_EQ(j["text_config"]["model_type"], "bridgetower_text_model");
  EXPECT_EQ(j["text_config"]["use_cache"], true);  // unmodelled field kept
  EXPECT_EQ(j["architectures"][0], "BridgeTowerForContrastiveLearning");
  auto back = load_config(path);
  EXPECT_EQ(back.to_json(), c.to_json());
  std::filesystem::remove(path);
}

TEST(ModelConfig, BadConfigsAreClearErrors) {
  auto err = [](const nlohmann::json& j) {
    try {
      config_from_json(j, "cfg.json");
    } catch (const bt::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err({{"model_type", "bert"}}).find("model_type"), std::string::npos);
  EXPECT_NE(err({{"hidden_size", "big"}}).find("hidden_size"), std::string::npos);
  EXPECT_NE(err({{"link_tower_type", "mul"}}).find("link_tower_type"), std::string::npos);
  EXPECT_NE(err({{"num_hidden_layers", 20}}).find("num_hidden_layers"), std::string::npos);
  EXPECT_NE(err({{"text_config", 3}}).find("text_config"), std::string::npos);
  EXPECT_EQ(err(nlohmann::json::object()), "");  // all defaults = bridgetower-base
  EXPECT_THROW(load_config("/nonexistent/config.json"), bt::Error);
}

TEST(ModelConfig, Presets) {
  EXPECT_EQ(preset("base").hidden_size, 768);
  EXPECT_EQ(preset("large").vision.patch_size, 14);
  EXPECT_EQ(preset("small").hidden_size, 256);
  EXPECT_EQ(preset("small").vision.image_size, 288);
  EXPECT_EQ(preset("tiny").vision.image_size, 64);
  EXPECT_THROW(preset("huge"), bt::Error);
}

// Hostile config.json values: each is a one-line error naming the file and the field, never a silent wrap,
// an unbounded allocation or a libtorch backtrace.
TEST(ModelConfig, RangeChecksEveryInteger) {
  auto err = [](const nlohmann::json& j) {
    try {
      config_from_json(j, "cfg.json");
    } catch (const bt::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // 4294967300 used to be read as 4 (get<int> wraps).
  EXPECT_EQ(err({{"num_attention_heads", 4294967300ull}}),
            "cfg.json: field \"num_attention_heads\" is out of range (4294967300)");
  EXPECT_EQ(err({{"hidden_size", -4294967296ll}}), "cfg.json: field \"hidden_size\" is out of range (-4294967296)");
  EXPECT_EQ(err({{"text_config", {{"intermediate_size", -5}}}}),
            "cfg.json: text_config.intermediate_size is -5, outside 1..65536");
  EXPECT_EQ(err({{"vision_config", {{"num_channels", 0}}}}),
            "cfg.json: vision_config.num_channels is 0, outside 1..16");
  EXPECT_NE(err({{"num_hidden_layers", 1000000000}}).find("num_hidden_layers is 1000000000, outside 1..256"),
            std::string::npos);
  EXPECT_NE(err({{"text_config", {{"vocab_size", 2000000000}}}}).find("text_config.vocab_size is 2000000000"),
            std::string::npos);
  EXPECT_NE(err({{"text_config", {{"vocab_size", 2e9}}}}).find("\"vocab_size\" has the wrong type"), std::string::npos);
  // Each size within its bound, together far too large: the parameter estimate stops it.
  nlohmann::json big = {{"hidden_size", 16384}, {"num_attention_heads", 16}, {"num_hidden_layers", 200},
                        {"text_config", {{"hidden_size", 16384}, {"num_hidden_layers", 200}, {"num_attention_heads", 16}}},
                        {"vision_config", {{"hidden_size", 16384}, {"num_hidden_layers", 200}}}};
  EXPECT_NE(err(big).find("parameters, more than the limit"), std::string::npos) << err(big);
  EXPECT_NE(err({{"layer_norm_eps", -1.0}}).find("layer_norm_eps"), std::string::npos);
  EXPECT_EQ(err(nlohmann::json::object()), "(no error)");
}
