// LoRA adapters (model/lora.h, model/lora_config.h): PEFT's name rules and files, adapters that change nothing
// until trained, merged = unmerged outputs, and a folder's adapter read back into the weights.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../common/error_of.h"
#include "../common/peak_growth.h"
#include "checkpoint/safetensors.h"
#include "common/error.h"
#include "fixture_dir.h"
#include "model/lora.h"

using namespace bt::model;
using bt::test::error_of;
using bt::test::peak_growth;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const std::string& tag) {
  auto d = fs::temp_directory_path() / ("bt_lora_" + tag + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

LoraSpec spec(int rank = 4) { return lora_spec(rank, 8.0, 0.0, kDefaultLoraTargets, kDefaultLoraModulesToSave); }

// The fixture model's contrastive logits on the fixture inputs, in eval mode.
Tensor logits(BridgeTowerForContrastiveLearning& m) {
  static auto in = load_tensors(std::string(BT_FIXTURE_DIR) + "/inputs.safetensors");
  torch::NoGradGuard ng;
  m->eval();
  return m->forward(in["pixel_values"], in["input_ids"], in["attention_mask"], false).logits;
}

// Every adapter's B set to small random values, as training would leave it.
void train_adapters_a_little(BridgeTowerForContrastiveLearning& m) {
  torch::NoGradGuard ng;
  torch::manual_seed(3);
  for (auto& kv : m->named_parameters(true))
    if (kv.key().find(".lora_B.") != std::string::npos) kv.value().normal_(0.0, 0.05);
}

}  // namespace

TEST(LoraConfig, NamesFollowPeftsRules) {
  EXPECT_TRUE(name_matches("bridgetower.text_model.encoder.layer.0.attention.self.query", {"query"}));
  EXPECT_TRUE(name_matches("query", {"query"}));
  EXPECT_FALSE(name_matches("bridgetower.x.subquery", {"query"}));  // a whole name part, not a substring
  EXPECT_TRUE(is_lora_parameter("a.query.lora_A.weight"));
  EXPECT_FALSE(is_lora_parameter("a.query.weight"));
  EXPECT_TRUE(in_modules_to_save("itc_text_head.fc.weight", {"itc_text_head"}));
  EXPECT_FALSE(in_modules_to_save("bridgetower.itc_text_head_x.weight", {"itc_text_head"}));
  EXPECT_EQ(peft_key("a.query.lora_A.weight"), "base_model.model.a.query.lora_A.weight");
  EXPECT_EQ(param_name_of("base_model.model.a.query.lora_B.weight"), "a.query.lora_B.weight");
  EXPECT_EQ(split_names(" query, value ,,c_fc"), (std::vector<std::string>{"query", "value", "c_fc"}));
  EXPECT_THROW(lora_spec(0, 8, 0, "query", ""), bt::Error);
  EXPECT_THROW(lora_spec(4, 8, 1.0, "query", ""), bt::Error);
  EXPECT_THROW(lora_spec(4, 8, 0, " , ", ""), bt::Error);
}

TEST(LoraConfig, AdapterConfigRoundTripsAndRefusesWhatIsNotPlainLora) {
  const std::string dir = temp_dir("config"), path = dir + "/adapter_config.json";
  LoraSpec s = spec(8);
  s.base_model_name_or_path = "BridgeTower/bridgetower-large-itm-mlm-itc";
  write_adapter_config(path, s);
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(path));
  EXPECT_EQ(j["peft_type"], "LORA");
  EXPECT_EQ(j["r"], 8);
  EXPECT_EQ(j["lora_alpha"], 8.0);
  EXPECT_EQ(j["bias"], "none");
  EXPECT_EQ(j["target_modules"], nlohmann::json({"query", "value", "c_fc", "c_proj"}));
  const LoraSpec back = read_adapter_config(path);
  EXPECT_EQ(back.rank, 8);
  EXPECT_EQ(back.target_modules, s.target_modules);
  EXPECT_EQ(back.modules_to_save, s.modules_to_save);
  EXPECT_EQ(back.base_model_name_or_path, s.base_model_name_or_path);
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"use_dora", true}, {"peft_type", "IA3"}, {"bias", "all"}, {"target_modules", ".*query"}}) {
    nlohmann::json bad = j;
    bad[key] = value;
    std::ofstream(path, std::ios::trunc) << bad.dump();
    try {
      read_adapter_config(path);
      ADD_FAILURE() << key << " accepted";
    } catch (const bt::Error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": "), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

TEST(Lora, AdaptersChangeNothingUntilTrainedAndOnlyThemAndTheHeadsTrain) {
  auto m = load_contrastive(BT_FIXTURE_DIR);
  const Tensor before = logits(m);
  const int adapted = add_lora(*m, spec());
  // Text layers (2) and cross-modal layers (2 x 2, self- and cross-attention): query + value; vision blocks: c_fc, c_proj.
  EXPECT_GT(adapted, 0);
  EXPECT_TRUE(torch::equal(logits(m), before));  // B = 0
  int64_t trainable = 0, lora = 0;
  for (auto& kv : m->named_parameters(true)) {
    const bool should = is_lora_parameter(kv.key()) || kv.key().rfind("itc_", 0) == 0;
    EXPECT_EQ(kv.value().requires_grad(), should) << kv.key();
    if (kv.value().requires_grad()) trainable += kv.value().numel();
    if (is_lora_parameter(kv.key())) ++lora;
  }
  EXPECT_EQ(lora, 2 * adapted);
  EXPECT_LT(trainable, m->count_parameters() / 5);
  EXPECT_THROW(add_lora(*m, spec()), bt::Error);  // twice
  auto other = load_contrastive(BT_FIXTURE_DIR);
  EXPECT_THROW(add_lora(*other, lora_spec(4, 8, 0, "query,no_such_layer", "")), bt::Error);
  auto vision_attn = load_contrastive(BT_FIXTURE_DIR);
  EXPECT_THROW(add_lora(*vision_attn, lora_spec(4, 8, 0, "out_proj", "")), bt::Error);  // HF's MHA: PEFT cannot
}

TEST(Lora, MergedEqualsUnmergedAndAFolderReadsBackAsTheSameModel) {
  auto m = load_contrastive(BT_FIXTURE_DIR);
  const Tensor plain = logits(m);
  add_lora(*m, spec());
  train_adapters_a_little(m);
  const Tensor with_adapters = logits(m);
  EXPECT_GT((with_adapters - plain).abs().max().item<double>(), 1e-3);  // the adapters do something
  const std::string dir = temp_dir("folder");
  m->save_pretrained(dir);
  // PEFT's layout: the base weights without adapters, the adapters under PEFT's keys with their shapes.
  auto base = bt::checkpoint::SafeTensors::open(dir + "/model.safetensors");
  for (const auto& t : base.tensors()) EXPECT_FALSE(is_lora_parameter(t.name)) << t.name;
  auto adapter = bt::checkpoint::SafeTensors::open(dir + "/adapter_model.safetensors");
  const std::string q = "base_model.model.bridgetower.text_model.encoder.layer.0.attention.self.query";
  const auto* a = adapter.find(q + ".lora_A.weight");
  const auto* b = adapter.find(q + ".lora_B.weight");
  ASSERT_TRUE(a && b);
  const int64_t hidden = m->config().text.hidden_size;
  EXPECT_EQ(a->shape, (std::vector<int64_t>{4, hidden}));
  EXPECT_EQ(b->shape, (std::vector<int64_t>{hidden, 4}));
  EXPECT_TRUE(adapter.find("base_model.model.itc_text_head.fc.weight"));
  for (const auto& t : adapter.tensors()) EXPECT_EQ(t.name.rfind("base_model.model.", 0), 0u) << t.name;
  // The folder loads with its adapter folded in: the same outputs; merging in place too (<= 1e-5).
  auto back = load_contrastive(dir);
  EXPECT_FALSE(has_lora(*back));
  EXPECT_LE((logits(back) - with_adapters).abs().max().item<double>(), 1e-5);
  merge_lora(*m);
  EXPECT_FALSE(has_lora(*m));
  EXPECT_LE((logits(m) - with_adapters).abs().max().item<double>(), 1e-5);
  fs::remove_all(dir);
}

// Issue 53, item 3: a folder's adapter is checked -- its config, the adapters' memory under the budget, the file's
// shapes -- before anything is allocated. r: 65536 in a 1 KB adapter_config.json beside rank-4 tensors took 1.36 GB
// on this tiny model (adapters on every targeted Linear) before the shapes were compared.
TEST(LoraBudget, AHostileRankIsRefusedBeforeAnythingIsAllocated) {
  const std::string dir = temp_dir("hostile_rank");
  {
    auto m = load_contrastive(BT_FIXTURE_DIR);
    add_lora(*m, spec(4));
    m->save_pretrained(dir);
  }
  const std::string config = dir + "/adapter_config.json";
  nlohmann::json j = nlohmann::json::parse(std::ifstream(config));
  j["r"] = 65536;
  std::ofstream(config, std::ios::trunc) << j.dump();
  constexpr uint64_t kMB = 1000 * 1000;
  std::string e;
  // Under --max_model_bytes 512 MiB: the adapters' memory is refused, naming them.
  uint64_t grew = peak_growth([&] { e = error_of([&] { load_contrastive(dir, {false, 1, uint64_t(512) << 20}); }); });
  EXPECT_EQ(e.rfind(dir + "/config.json: this model would need about ", 0), 0u) << e;
  EXPECT_NE(e.find(" of them the LoRA adapters of " + config), std::string::npos) << e;
  EXPECT_NE(e.find("--max_model_bytes 536870912"), std::string::npos) << e;
  EXPECT_LT(grew, 64 * kMB) << grew;
  // With room for them: the file's rank-4 tensors are refused, from its header.
  grew = peak_growth([&] { e = error_of([&] { load_contrastive(dir, {false, 1, uint64_t(64) << 30}); }); });
  EXPECT_EQ(e.rfind(dir + "/adapter_model.safetensors: tensor 'base_model.model.", 0), 0u) << e;
  EXPECT_NE(e.find("has shape [4, 64], the model expects [65536, 64]"), std::string::npos) << e;
  EXPECT_LT(grew, 64 * kMB) << grew;
  // A target the model lacks is named with the file it came from.
  j["r"] = 4;
  j["target_modules"] = {"query", "no_such_layer"};
  std::ofstream(config, std::ios::trunc) << j.dump();
  e = error_of([&] { load_contrastive(dir, {false, 1, uint64_t(64) << 30}); });
  EXPECT_EQ(e.rfind(config + ": --lora_target_modules: no_such_layer names no Linear layer", 0), 0u) << e;
  fs::remove_all(dir);
}

TEST(LoraBudget, TheAdaptersCountInTheModelsMemory) {
  const std::string dir = temp_dir("adapter_budget");
  {
    auto m = load_contrastive(BT_FIXTURE_DIR);
    add_lora(*m, spec(32));
    m->save_pretrained(dir);
  }
  const BridgeTowerConfig c = load_pretrained_config(dir);
  const int64_t adapters = check_adapter_fits(c, dir, {false, 1, uint64_t(64) << 30});
  auto with = load_contrastive(BT_FIXTURE_DIR);
  const int64_t before = with->count_parameters();
  add_lora(*with, spec(32));
  EXPECT_EQ(adapters, with->count_parameters() - before);  // the adapters' own count, from the meta device
  // A budget the plain model fits and the model with its adapters does not.
  const uint64_t plain = estimate_model_memory(c, {false, 1, 0}).total();
  ASSERT_GT(uint64_t(adapters) * 4, 1u);
  EXPECT_EQ(error_of([&] { load_contrastive(BT_FIXTURE_DIR, {false, 1, plain}); }), "");
  const std::string e = error_of([&] { load_contrastive(dir, {false, 1, plain}); });
  EXPECT_NE(e.find(std::to_string(before + adapters) + " parameters, " + std::to_string(adapters) +
                   " of them the LoRA adapters of " + dir + "/adapter_config.json"), std::string::npos) << e;
  EXPECT_EQ(error_of([&] { load_contrastive(dir, {false, 1, plain + uint64_t(adapters) * 4}); }), "");
  fs::remove_all(dir);
}
