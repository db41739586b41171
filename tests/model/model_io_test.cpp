// Checkpoint I/O, parameter bookkeeping and the ITM/MLM heads of bt_model.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <fstream>

#include "checkpoint/safetensors.h"
#include "common/error.h"
#include "fixture_dir.h"
#include "model/bridgetower.h"

using namespace bt::model;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const std::string& tag) {
  auto d = fs::temp_directory_path() / ("bt_model_" + tag + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

std::map<std::string, Tensor> inputs() { return load_tensors(std::string(BT_FIXTURE_DIR) + "/inputs.safetensors"); }

}  // namespace

TEST(ModelIO, ParameterNamesEqualTheReferenceStateDict) {
  auto f = bt::checkpoint::SafeTensors::open(std::string(BT_FIXTURE_DIR) + "/model.safetensors");
  BridgeTowerForContrastiveLearning m(load_config(std::string(BT_FIXTURE_DIR) + "/config.json"));
  std::set<std::string> ours, theirs;
  for (auto& kv : m->named_parameters(true)) ours.insert(kv.key());
  for (auto& t : f.tensors()) theirs.insert(t.name);
  EXPECT_EQ(ours, theirs);
}

TEST(ModelIO, SaveReloadRoundTripGivesIdenticalOutputs) {
  auto m = load_contrastive(BT_FIXTURE_DIR);
  m->eval();
  auto dir = temp_dir("roundtrip");
  m->save_pretrained(dir);
  testing::internal::CaptureStderr();
  auto back = load_contrastive(dir);
  // HF's position_ids buffers are written (below) and read back without a "skipped ... tensors" line.
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  back->eval();
  auto in = inputs();
  torch::NoGradGuard ng;
  auto a = m->forward(in["pixel_values"], in["input_ids"], in["attention_mask"]);
  auto b = back->forward(in["pixel_values"], in["input_ids"], in["attention_mask"]);
  EXPECT_TRUE(torch::equal(a.logits, b.logits));
  EXPECT_TRUE(torch::equal(a.loss, b.loss));
  auto cfg = load_config(dir + "/config.json");
  EXPECT_EQ(cfg.to_json(), m->config().to_json());
  EXPECT_EQ(cfg.text.vocab_size, 1000);
  auto st = bt::checkpoint::SafeTensors::open(dir + "/model.safetensors");
  EXPECT_EQ(st.metadata().at("format"), "pt");
  EXPECT_EQ(st.tensors().size(), 228u);  // 226 parameters + the two towers' position_ids buffers
  auto saved = load_tensors(dir + "/model.safetensors");
  for (const char* key : {"bridgetower.text_model.embeddings.position_ids",
                          "bridgetower.vision_model.visual.embeddings.position_ids"}) {
    ASSERT_TRUE(saved.count(key)) << key;
    const Tensor& ids = saved.at(key);
    EXPECT_EQ(ids.scalar_type(), torch::kLong) << key;
    EXPECT_TRUE(torch::equal(ids, torch::arange(ids.size(1), torch::kLong).unsqueeze(0))) << key;
  }
  EXPECT_EQ(saved.at("bridgetower.text_model.embeddings.position_ids").size(1), cfg.text.max_position_embeddings);
  fs::remove_all(dir);
}

TEST(ModelIO, HalfPrecisionCheckpointIsConverted) {
  auto m = load_contrastive(BT_FIXTURE_DIR);
  auto dir = temp_dir("bf16");
  fs::copy_file(std::string(BT_FIXTURE_DIR) + "/config.json", dir + "/config.json");
  std::vector<std::pair<std::string, Tensor>> ts;
  for (auto& kv : m->named_parameters(true)) ts.emplace_back(kv.key(), kv.value().to(torch::kBFloat16));
  save_tensors(dir + "/model.safetensors", ts);
  auto h = load_contrastive(dir);
  auto p = h->named_parameters(true)["itc_text_head.fc.weight"];
  auto q = m->named_parameters(true)["itc_text_head.fc.weight"];
  EXPECT_EQ(p.scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::allclose(p, q, 1e-2, 1e-3));
  EXPECT_FALSE(torch::equal(p, q));  // really went through bf16
  fs::remove_all(dir);
}

TEST(ModelIO, MissingOrMisShapedTensorNamesKeyAndShapes) {
  auto m = load_contrastive(BT_FIXTURE_DIR);
  auto dir = temp_dir("bad");
  fs::copy_file(std::string(BT_FIXTURE_DIR) + "/config.json", dir + "/config.json");
  std::vector<std::pair<std::string, Tensor>> ts;
  for (auto& kv : m->named_parameters(true))
    if (kv.key() != "logit_scale") ts.emplace_back(kv.key(), kv.value());
  save_tensors(dir + "/model.safetensors", ts);
  try {
    load_contrastive(dir);
    FAIL() << "missing tensor accepted";
  } catch (const bt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("logit_scale"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(load_contrastive(dir, {}, /*allow_missing_heads=*/true));
  ts.emplace_back("logit_scale", torch::zeros({}));
  ts[0].second = torch::zeros({3, 5});
  std::string key = ts[0].first;
  save_tensors(dir + "/model.safetensors", ts);
  try {
    load_contrastive(dir);
    FAIL() << "mis-shaped tensor accepted";
  } catch (const bt::Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(key), std::string::npos) << msg;
    EXPECT_NE(msg.find("[3, 5]"), std::string::npos) << msg;
  }
  fs::remove_all(dir);
}

TEST(ModelIO, ShardedIndexIsRead) {
  auto m = load_contrastive(BT_FIXTURE_DIR);
  auto dir = temp_dir("sharded");
  fs::copy_file(std::string(BT_FIXTURE_DIR) + "/config.json", dir + "/config.json");
  std::vector<std::pair<std::string, Tensor>> a, b;
  nlohmann::json idx = {{"metadata", {{"total_size", 0}}}, {"weight_map", nlohmann::json::object()}};
  int i = 0;
  for (auto& kv : m->named_parameters(true)) {
    bool first = (i++ % 2) == 0;
    (first ? a : b).emplace_back(kv.key(), kv.value());
    idx["weight_map"][kv.key()] = first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  save_tensors(dir + "/model-00001-of-00002.safetensors", a);
  save_tensors(dir + "/model-00002-of-00002.safetensors", b);
  std::ofstream(dir + "/model.safetensors.index.json") << idx.dump();
  auto s = load_contrastive(dir);
  auto in = inputs();
  torch::NoGradGuard ng;
  m->eval();
  s->eval();
  EXPECT_TRUE(torch::equal(m->forward(in["pixel_values"], in["input_ids"], in["attention_mask"]).logits,
                           s->forward(in["pixel_values"], in["input_ids"], in["attention_mask"]).logits));
  fs::remove_all(dir);
}

TEST(ModelIO, PresetParameterCountsMatchReference) {
  auto meta = torch::TensorOptions().device(torch::kMeta);
  EXPECT_EQ(BridgeTowerForContrastiveLearning(preset("base"), meta)->count_parameters(), 327921409);
  EXPECT_EQ(BridgeTowerForContrastiveLearning(preset("large"), meta)->count_parameters(), 866612737);
}

TEST(ModelIO, ParamGroupsAndFreezing) {
  BridgeTowerForContrastiveLearning m(preset("tiny"));
  auto g = adamw_param_groups(*m);
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  EXPECT_TRUE(has(g.no_decay_names, "bridgetower.cross_modal_text_layernorm.weight"));
  EXPECT_TRUE(has(g.no_decay_names, "bridgetower.vision_model.visual.ln_post.weight"));
  EXPECT_TRUE(has(g.no_decay_names, "itc_text_head.fc.bias"));
  EXPECT_TRUE(has(g.decay_names, "itc_text_head.fc.weight"));
  EXPECT_TRUE(has(g.decay_names, "logit_scale"));
  int64_t before = m->count_parameters(true);
  EXPECT_GT(freeze_parameters(*m, kVisionTowerPrefix), 0);
  EXPECT_LT(m->count_parameters(true), before);
  auto g2 = adamw_param_groups(*m);
  EXPECT_FALSE(has(g2.decay_names, "bridgetower.vision_model.visual.embeddings.patch_embedding.weight"));
}

TEST(ModelIO, RandomInitFollowsHfInitWeights) {
  torch::manual_seed(0);
  BridgeTowerForContrastiveLearning m(preset("tiny"));
  auto p = m->named_parameters(true);
  EXPECT_NEAR(p["logit_scale"].item<double>(), 2.6592, 1e-6);
  EXPECT_EQ(p["bridgetower.cross_modal_text_layernorm.weight"].min().item<double>(), 1.0);
  EXPECT_EQ(p["itc_text_head.fc.bias"].abs().max().item<double>(), 0.0);
  EXPECT_NEAR(p["bridgetower.text_model.embeddings.word_embeddings.weight"].std().item<double>(), 0.05, 0.002);
  // CLIP-style init of the vision blocks: in_proj std = hidden^-0.5.
  EXPECT_NEAR(p["bridgetower.vision_model.visual.transformer.resblocks.0.attn.in_proj_weight"].std().item<double>(),
              0.125, 0.01);
}

TEST(ModelHeads, ItmAndMlmLoadAndRun) {
  auto cfg = load_config(std::string(BT_FIXTURE_DIR) + "/config.json");
  auto in = inputs();
  BridgeTowerForImageAndTextRetrieval itm(cfg);
  itm->load_weights(BT_FIXTURE_DIR, /*allow_missing_heads=*/true);  // shares "bridgetower." with the fixture
  itm->eval();
  auto labels = torch::tensor({1, 0, 1, 0}, torch::kLong);
  auto o = itm->forward(in["pixel_values"], in["input_ids"], in["attention_mask"], labels);
  EXPECT_EQ(o.logits.sizes(), (std::vector<int64_t>{4, 2}));
  EXPECT_TRUE(std::isfinite(o.loss.item<double>()));
  BridgeTowerForMaskedLM mlm(cfg);
  mlm->load_weights(BT_FIXTURE_DIR, true);
  mlm->eval();
  auto ml = mlm->forward(in["pixel_values"], in["input_ids"], in["attention_mask"], in["input_ids"]);
  EXPECT_EQ(ml.logits.sizes(), (std::vector<int64_t>{4, 12, 1000}));
  EXPECT_TRUE(std::isfinite(ml.loss.item<double>()));
  // The save/load path works for the heads too.
  auto dir = temp_dir("itm");
  itm->save_pretrained(dir);
  BridgeTowerForImageAndTextRetrieval back(load_config(dir + "/config.json"));
  back->load_weights(dir);
  back->eval();
  torch::NoGradGuard ng;
  EXPECT_TRUE(torch::equal(back->forward(in["pixel_values"], in["input_ids"], in["attention_mask"]).logits,
                           itm->forward(in["pixel_values"], in["input_ids"], in["attention_mask"]).logits));
  fs::remove_all(dir);
}

TEST(ModelHeads, WrongImageSizeIsAClearError) {
  BridgeTowerForContrastiveLearning m(preset("tiny"));
  auto ids = torch::ones({2, 5}, torch::kLong);
  EXPECT_THROW(m->forward(torch::zeros({2, 3, 32, 32}), ids, ids), bt::Error);
}

// Run by the ctest `model.cli_forward`, which first writes BT_FORWARD_OUT with `bridgetune forward` on the
// fixture; skipped when run on its own.
TEST(CliOutput, ForwardCommandMatchesReference) {
  const char* path = std::getenv("BT_FORWARD_OUT");
  if (!path) GTEST_SKIP() << "BT_FORWARD_OUT not set";
  auto got = load_tensors(path);
  auto ref = load_tensors(std::string(BT_FIXTURE_DIR) + "/outputs.safetensors");
  for (const char* k : {"text_embeds", "image_embeds", "cross_embeds", "logits", "loss"}) {
    ASSERT_TRUE(got.count(k)) << k;
    EXPECT_TRUE(torch::allclose(got[k], ref[k], 1e-4, 1e-5)) << k;
  }
}

// A diverged model is never written: save_pretrained names the first tensor holding NaN/inf and writes no weights.
TEST(ModelIO, NonFiniteWeightsAreNeverWritten) {
  auto m = load_contrastive(BT_FIXTURE_DIR);
  {
    torch::NoGradGuard ng;
    m->named_parameters()["logit_scale"].fill_(std::numeric_limits<float>::quiet_NaN());
  }
  const auto dir = temp_dir("nonfinite");
  try {
    m->save_pretrained(dir);
    ADD_FAILURE() << "saved NaN weights";
  } catch (const bt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("logit_scale holds NaN/inf values"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir + "/model.safetensors"));
  fs::remove_all(dir);
}

// Nor read: a checkpoint holding NaN (a diverged run's written by an older version, bytes damaged where no manifest
// looks) is refused naming the file and the tensor, instead of being trained into NaN.
TEST(ModelIO, NonFiniteWeightsAreNeverRead) {
  const auto dir = temp_dir("nonfinite_read");
  for (const char* f : {"config.json", "model.safetensors"})
    fs::copy_file(fs::path(BT_FIXTURE_DIR) / f, fs::path(dir) / f);
  std::string bytes;
  {
    std::ifstream in(dir + "/model.safetensors", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), 8);
  const std::string ff(4096, '\xff');  // 0xFFFFFFFF is a float32 NaN
  bytes.replace(8 + header + bytes.size() / 4 - (bytes.size() / 4) % 4, ff.size(), ff);
  std::ofstream(dir + "/model.safetensors", std::ios::binary | std::ios::trunc) << bytes;
  try {
    load_contrastive(dir);
    ADD_FAILURE() << "loaded NaN weights";
  } catch (const bt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.safetensors: tensor '"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("holds NaN/inf values"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}
