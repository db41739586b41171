// pytorch_model.bin into the model, and from_pretrained's key rules, on fixtures written by the real torch.save
// (make_torch_checkpoints.py via the model.torch_fixtures test, into BT_TORCHBIN_DIR).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "fixture_dir.h"
#include "model/bridgetower.h"

using namespace bt::model;
namespace fs = std::filesystem;

namespace {

const char* kSnapshot = "snapshots/1234567890abcdef1234567890abcdef12345678";

std::string bin_dir() {
  return BT_TORCHBIN_DIR;
}

std::string repo(const std::string& name) { return bin_dir() + "/hub/models--bt-test--" + name + "/" + kSnapshot; }

std::map<std::string, Tensor> params(torch::nn::Module& m) {
  std::map<std::string, Tensor> out;
  for (auto& kv : m.named_parameters(true)) out[kv.key()] = kv.value();
  return out;
}

}  // namespace

class TorchBin : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::ifstream(bin_dir() + "/dtypes.bin")) FAIL() << "no fixtures in " << bin_dir() << ": run ctest (model.torch_fixtures)";
  }
};

TEST_F(TorchBin, EveryDtypeAndLayoutEqualsTheContiguousCopy) {
  auto bin = load_tensors(bin_dir() + "/dtypes.bin");
  auto ref = load_tensors(bin_dir() + "/dtypes.safetensors");
  ASSERT_EQ(bin.size(), ref.size());
  for (auto& [name, t] : ref) {
    ASSERT_TRUE(bin.count(name)) << name;
    EXPECT_EQ(bin[name].scalar_type(), t.scalar_type()) << name;
    EXPECT_TRUE(torch::equal(bin[name], t)) << name;
  }
}

TEST_F(TorchBin, HeadsTheModelLacksAreNamedAndHfBuffersSkippedSilently) {
  auto ref = load_contrastive(BT_FIXTURE_DIR);
  for (const char* r : {"tiny-bin", "tiny-sharded"}) {
    BridgeTowerForContrastiveLearning m(load_config(repo(r) + "/config.json"));
    testing::internal::CaptureStderr();
    m->load_weights(repo(r), true);
    std::string log = testing::internal::GetCapturedStderr();
    EXPECT_NE(log.find("skipped 3 checkpoint tensors"), std::string::npos) << log;
    for (const char* k : {"itm_score.fc.weight", "mlm_score.transform.dense.weight"})
      EXPECT_NE(log.find(k), std::string::npos) << log;
    EXPECT_EQ(log.find("position_ids"), std::string::npos) << log;  // HF's buffers: expected, read silently
    EXPECT_EQ(log.find("keep their initialisation"), std::string::npos) << log;
    auto got = params(*m), want = params(*ref);
    for (auto& [name, t] : want) EXPECT_TRUE(torch::equal(got.at(name), t)) << r << " " << name;
  }
}

TEST_F(TorchBin, MissingHeadsKeepTheirInitAndAreNamed) {
  auto ref = load_contrastive(BT_FIXTURE_DIR);
  BridgeTowerForContrastiveLearning m(load_config(repo("tiny-base") + "/config.json"));
  testing::internal::CaptureStderr();
  m->load_weights(repo("tiny-base"), true);
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("keep their initialisation"), std::string::npos) << log;
  EXPECT_NE(log.find("itc_text_head.fc.weight"), std::string::npos) << log;
  auto got = params(*m), want = params(*ref);
  int heads = 0;
  for (auto& [name, t] : want) {
    if (name.rfind("bridgetower.", 0) == 0) {
      EXPECT_TRUE(torch::equal(got.at(name), t)) << name;
    } else {
      ++heads;
      EXPECT_NE(log.find(name), std::string::npos) << name;
    }
  }
  EXPECT_GT(heads, 0);
  // Initialised as HF's _init_weights does: logit_scale from the config, Linear N(0, 0.05 * factor), bias 0.
  EXPECT_NEAR(got.at("logit_scale").item<double>(), 2.6592, 1e-6);
  EXPECT_NEAR(got.at("itc_text_head.fc.weight").std().item<double>(), 0.05, 0.01);
  EXPECT_EQ(got.at("itc_text_head.fc.bias").abs().max().item<double>(), 0.0);
  // A backbone tensor stays required.
  EXPECT_THROW(load_contrastive(repo("tiny-base"), {}, false), bt::Error);
}

TEST_F(TorchBin, SafetensorsIsPreferredWhenBothExist) {
  auto dir = fs::temp_directory_path() / ("bt_torchbin_both_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(fs::path(BT_FIXTURE_DIR) / f, dir / f);
  std::ofstream(dir / "pytorch_model.bin") << "not a checkpoint";
  EXPECT_NO_THROW(load_contrastive(dir.string()));
  fs::remove(dir / "model.safetensors");
  try {
    load_contrastive(dir.string());
    FAIL() << "a garbage pytorch_model.bin loaded";
  } catch (const bt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("pytorch_model.bin"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}
