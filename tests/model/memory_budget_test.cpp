// A config.json's model is sized before it is allocated (model/memory_budget.h, check_checkpoint_fits): the
// estimate is the model's own parameter count, a limit is named when exceeded, and a config that describes a
// larger model than its checkpoint holds is refused without building it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../common/error_of.h"
#include "common/error.h"
#include "common/json.h"
#include "common/machine_memory.h"
#include "fixture_dir.h"
#include "model/bridgetower.h"
#include "model/memory_budget.h"

using namespace bt::model;
namespace fs = std::filesystem;

namespace {

using bt::test::error_of;

// The example: a 1 KB config.json inside validate()'s bounds that asks for ~2.7e9 parameters.
nlohmann::json huge_config() {
  std::ifstream f(std::string(BT_FIXTURE_DIR) + "/config.json");
  nlohmann::json c = nlohmann::json::parse(f);
  c["hidden_size"] = 4096, c["num_attention_heads"] = 16, c["num_hidden_layers"] = 2;
  c["text_config"]["hidden_size"] = 4096, c["text_config"]["num_attention_heads"] = 16;
  c["text_config"]["num_hidden_layers"] = 12, c["text_config"]["intermediate_size"] = 8192;
  c["vision_config"]["hidden_size"] = 1024, c["vision_config"]["num_hidden_layers"] = 12;
  return c;
}

}  // namespace

TEST(MemoryBudget, EstimateIsTheModelsOwnCount) {
  const BridgeTowerConfig base = preset("base");
  const ModelMemory infer = estimate_model_memory(base, {false, 1, 0});
  EXPECT_EQ(infer.parameters, parameter_count(base));
  EXPECT_EQ(infer.weights, uint64_t(parameter_count(base)) * 4);
  EXPECT_EQ(infer.optimizer, 0u);
  const ModelMemory train = estimate_model_memory(base, {true, 1, 0});
  EXPECT_EQ(train.optimizer, 3 * train.weights);  // gradients + AdamW's two moments
  // Activations grow with the batch: one batch of float pixels at least.
  const ModelMemory batch16 = estimate_model_memory(base, {false, 16, 0});
  EXPECT_GE(batch16.activations, 16ull * 3 * 288 * 288 * 4);
  EXPECT_EQ(batch16.activations, 16 * infer.activations);
}

TEST(MemoryBudget, RefusesNamingTheFileTheEstimateAndTheLimit) {
  const BridgeTowerConfig c = config_from_json(huge_config(), "M/config.json");
  const ModelMemory m = estimate_model_memory(c, {true, 1, 0});
  EXPECT_GT(m.parameters, 2'500'000'000);
  EXPECT_GT(m.weights, 10'000'000'000u);
  const std::string e = error_of([&] { check_model_memory(c, {true, 1, uint64_t(4) << 30}); });
  EXPECT_EQ(e.rfind("M/config.json: ", 0), 0u) << e;
  EXPECT_NE(e.find(bt::bytes_str(m.total())), std::string::npos) << e;
  EXPECT_NE(e.find("--max_model_bytes"), std::string::npos) << e;
  EXPECT_EQ(error_of([&] { check_model_memory(preset("tiny"), {true, 1, uint64_t(4) << 30}); }), "");
}

TEST(MemoryBudget, ACheckpointMustFillItsConfigBeforeTheModelIsBuilt) {
  const fs::path dir = fs::temp_directory_path() / ("bt_model_budget_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(std::string(BT_FIXTURE_DIR) + "/model.safetensors", dir / "model.safetensors");
  std::ofstream(dir / "config.json") << huge_config().dump();
  EXPECT_NO_THROW(check_checkpoint_fits(load_pretrained_config(BT_FIXTURE_DIR), BT_FIXTURE_DIR, false));
  // 10.6 GB of weights would be allocated and initialised first if the shapes were only compared while copying.
  const std::string e = error_of([&] { load_contrastive(dir.string(), {false, 1, uint64_t(64) << 30}); });
  EXPECT_NE(e.find("has shape [64, 64], the model expects [4096, 4096]"), std::string::npos) << e;
  fs::remove_all(dir);
}
