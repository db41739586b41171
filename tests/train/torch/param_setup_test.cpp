// train/torch/param_setup.h: per-part learning rates and layer-wise decay as each parameter's AdamW lr_scale,
// freezing by layers and the temperature, on the tiny preset; and through `bridgetune train`: the logged logit
// scale under --logit_scale_init/--logit_scale_max/--freeze_logit_scale, label smoothing, the from-scratch hint.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>

#include "data/synth.h"
#include "model/param_parts.h"
#include "report/run_log.h"
#include "run_bridgetune.h"
#include "train/run_settings.h"
#include "train/torch/optim.h"
#include "train/torch/param_setup.h"

namespace fs = std::filesystem;
using namespace bt;

namespace {

TEST(ParamSetup, PartRatesAndLayerDecayBecomeEachParametersScale) {
  model::BridgeTowerForContrastiveLearning m(model::preset("tiny"));
  train::TrainOptions o;
  o.vision_learning_rate = 2e-4, o.cross_modal_learning_rate = 4e-4, o.layer_decay = 0.5;
  train::RunSettings s;
  s.learning_rate = 1e-4;
  train::AdamW opt = train::make_adamw(*m, {}, train::lr_scales(o, s, m->config()));
  const int L = m->config().vision.num_hidden_layers, T = m->config().text.num_hidden_layers;
  int checked = 0;
  for (const auto& p : opt.params()) {
    const model::ParamPlace at = model::param_place(p.name, m->config());
    double want = 1;
    if (at.part == model::ModelPart::kVision) want = 2.0 * std::pow(0.5, L + 1 - at.layer);
    if (at.part == model::ModelPart::kText) want = std::pow(0.5, T + 1 - at.layer);  // the text tower: --learning_rate
    if (at.part == model::ModelPart::kCrossModal) want = 4.0;
    EXPECT_DOUBLE_EQ(p.lr_scale, want) << p.name;
    ++checked;
  }
  EXPECT_GT(checked, 50);
  const auto logged = train::part_lr_factors(o, s);
  ASSERT_EQ(logged.size(), 3u);
  EXPECT_EQ(logged[0].first, "lr_vision");
  EXPECT_DOUBLE_EQ(logged[0].second, 2.0);
  const train::TrainOptions plain;
  EXPECT_TRUE(train::part_lr_factors(plain, s).empty());  // no groups: nothing more to log
  EXPECT_FALSE(train::lr_scales(plain, s, m->config()));
}

// Issue 57: an unset part rate inherits --learning_rate; 0 is a rate of 0 (it used to mean "inherit", so a user who
// wrote 0 to hold a tower still trained it at the full rate).
TEST(ParamSetup, ZeroIsARateAndUnsetInherits) {
  model::BridgeTowerForContrastiveLearning m(model::preset("tiny"));
  train::TrainOptions o;
  o.vision_learning_rate = 0;
  train::RunSettings s;
  s.learning_rate = 1e-4;
  const auto scale = train::lr_scales(o, s, m->config());
  ASSERT_TRUE(scale);
  train::AdamW opt = train::make_adamw(*m, {}, scale);
  int vision = 0;
  for (const auto& p : opt.params()) {
    const model::ParamPlace at = model::param_place(p.name, m->config());
    EXPECT_DOUBLE_EQ(p.lr_scale, at.part == model::ModelPart::kVision ? 0.0 : 1.0) << p.name;
    vision += at.part == model::ModelPart::kVision;
  }
  EXPECT_GT(vision, 10);
  EXPECT_DOUBLE_EQ(train::part_lr_factors(o, s)[0].second, 0.0);
}

TEST(ParamSetup, FreezingByLayersLeavesTheUpperLayersTrainable) {
  model::BridgeTowerForContrastiveLearning m(model::preset("tiny"));
  train::TrainOptions o;
  o.freeze_text_pooler = false;
  o.freeze_vision_layers = 1, o.freeze_text_layers = 2, o.freeze_logit_scale = true;
  EXPECT_GT(train::apply_freezing(m, o), 0);
  for (const auto& kv : m->named_parameters(true)) {
    const model::ParamPlace at = model::param_place(kv.key(), m->config());
    bool frozen = kv.key() == "logit_scale";
    if (at.part == model::ModelPart::kVision) frozen = at.layer <= 1;
    if (at.part == model::ModelPart::kText) frozen = at.layer <= 2;
    EXPECT_EQ(kv.value().requires_grad(), !frozen) << kv.key();
  }
  train::AdamW opt = train::make_adamw(*m, {});
  for (const auto& p : opt.params()) EXPECT_TRUE(p.tensor.requires_grad()) << p.name;  // frozen ones: no state
}

TEST(ParamSetup, LogitScaleStartsWhereAskedAndStaysBounded) {
  model::BridgeTowerForContrastiveLearning m(model::preset("tiny"));
  train::TrainOptions o;
  o.logit_scale_init = 5.0, o.logit_scale_max = 100;
  train::init_logit_scale(m, o);
  EXPECT_DOUBLE_EQ(m->logit_scale.item<double>(), 5.0);
  train::bound_logit_scale(m, o);
  EXPECT_NEAR(m->logit_scale.item<double>(), std::log(100.0), 1e-6);
  o.logit_scale_max = 0;  // no bound
  train::init_logit_scale(m, o);
  train::bound_logit_scale(m, o);
  EXPECT_DOUBLE_EQ(m->logit_scale.item<double>(), 5.0);
}

class FinetuneCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_finetune_" + std::to_string(getpid()));
    fs::remove_all(root_);
    data::SynthOptions so;
    so.n = 48, so.images = 16, so.seed = 4, so.min_width = 96, so.max_width = 128, so.threads = 2;
    data::write_synth((root_ / "data").string(), so);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }
  static std::string run(const fs::path& out, std::initializer_list<std::string> more) {
    std::vector<std::string> a{"train", "--train_file", (root_ / "data").string(), "--output_dir", out.string(),
                               "--image_size", "32", "--per_device_train_batch_size", "8", "--max_steps", "4",
                               "--logging_steps", "1", "--torch_threads", "1", "--dataloader_num_workers", "0"};
    a.insert(a.end(), more);
    const fs::path log = out.string() + ".log";
    EXPECT_EQ(test::wait_exit_code(test::spawn_bridgetune(a, log)), 0) << test::slurp(log);
    return test::slurp(log);
  }
  static std::vector<double> logged(const fs::path& out, const std::string& key) {
    std::vector<double> v;
    for (const auto& r : report::read_records(out / "metrics.jsonl"))
      if (r.contains(key)) v.push_back(r[key].get<double>());
    return v;
  }
  static inline fs::path root_;
};

TEST_F(FinetuneCli, TemperatureControlsShowInTheLog) {
  run(root_ / "bounded", {"--learning_rate", "1e-1", "--logit_scale_init", "4.5", "--logit_scale_max", "20"});
  const auto bounded = logged(root_ / "bounded", "logit_scale");
  ASSERT_EQ(bounded.size(), 4u);
  for (double v : bounded) EXPECT_LE(v, std::log(20.0) + 1e-6);
  run(root_ / "frozen", {"--learning_rate", "1e-1", "--logit_scale_init", "1.5", "--freeze_logit_scale"});
  for (double v : logged(root_ / "frozen", "logit_scale")) EXPECT_DOUBLE_EQ(v, 1.5);
  run(root_ / "smoothed", {"--learning_rate", "1e-3", "--label_smoothing", "0.1", "--vision_learning_rate", "2e-3"});
  const auto lr_vision = logged(root_ / "smoothed", "lr_vision"), lr = logged(root_ / "smoothed", "lr");
  ASSERT_EQ(lr_vision.size(), lr.size());
  for (size_t i = 0; i < lr.size(); ++i) EXPECT_NEAR(lr_vision[i], 2 * lr[i], 1e-12);
}

TEST_F(FinetuneCli, FromScratchAtAFineTuningRateSaysWhatLearns) {
  const std::string hint = "trains from scratch here, at --learning_rate 5e-05, a fine-tuning rate";
  EXPECT_NE(run(root_ / "slow", {}).find(hint), std::string::npos);
  EXPECT_EQ(run(root_ / "fast", {"--learning_rate", "5e-4"}).find("trains from scratch here"), std::string::npos);
}

}  // namespace
