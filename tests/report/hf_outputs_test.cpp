// The Hugging Face Trainer's files: trainer_state.json's schema and log_history, save_metrics' merging, the model card.
#include "report/hf_outputs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "report/run_log.h"

namespace fs = std::filesystem;
using namespace bt::report;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("bt_hf_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<nlohmann::json> records() {
  return {to_json(WindowRecord{10, 0.5, 2.5, 1e-5, 80, 5, 1.25}),
          {{"step", 20}, {"eval_loss", 1.5}, {"eval_i2t_r1", 0.25}, {"eval_samples", 8}},
          to_json(WindowRecord{20, 1.0, 2.0, 5e-6, 90, 4, 0.75}),
          {{"step", 20}, {"epoch", 1.0}, {"train_runtime", 3.5}, {"train_loss", 2.25}},
          {{"step", 30}, {"eval_loss", 1.0}}};
}

}  // namespace

TEST(HfOutputs, LogHistoryUsesTheTrainersKeyNames) {
  const nlohmann::json h = hf_log_history(records(), 20, 20);
  ASSERT_EQ(h.size(), 4u);  // the step-30 record is past the checkpoint
  EXPECT_EQ(h[0], (nlohmann::json{{"loss", 2.5}, {"grad_norm", 1.25}, {"learning_rate", 1e-5}, {"epoch", 0.5}, {"step", 10}}));
  EXPECT_EQ(h[1], (nlohmann::json{{"eval_loss", 1.5}, {"eval_i2t_r1", 0.25}, {"eval_samples", 8}, {"epoch", 1.0}, {"step", 20}}));
  EXPECT_EQ(h[3]["train_runtime"], 3.5);
  EXPECT_EQ(h[3]["epoch"], 1.0);
}

TEST(HfOutputs, TrainerStateHasExactlyHfsFields) {
  HfStateInfo i;
  i.global_step = 40, i.max_steps = 40, i.steps_per_epoch = 8, i.logging_steps = 10, i.eval_steps = -1, i.save_steps = 0;
  i.train_batch_size = 40, i.num_train_epochs = 5;
  i.total_flos = 2.5e12;  // HF's estimate of the run's work (model/flops.h: hf_total_flos)
  const auto j = hf_trainer_state(i, hf_log_history(records(), 40, 8));
  // transformers' TrainerState dataclass fields (4.4x): HF loads the file as TrainerState(**json), so no other key.
  const std::set<std::string> hf = {"best_metric", "best_model_checkpoint", "epoch", "eval_steps", "global_step",
                                    "is_hyper_param_search", "is_local_process_zero", "is_world_process_zero",
                                    "log_history", "logging_steps", "max_steps", "num_input_tokens_seen",
                                    "num_train_epochs", "save_steps", "stateful_callbacks", "total_flos",
                                    "train_batch_size", "trial_name", "trial_params"};
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.insert(k);
  EXPECT_EQ(keys, hf);
  EXPECT_EQ(j["global_step"], 40);
  EXPECT_DOUBLE_EQ(j["total_flos"].get<double>(), 2.5e12);
  EXPECT_DOUBLE_EQ(j["epoch"].get<double>(), 5.0);
  EXPECT_EQ(j["eval_steps"], 8);   // per epoch
  EXPECT_EQ(j["save_steps"], 500);  // none: HF's default
  EXPECT_TRUE(j["best_metric"].is_null());
  EXPECT_EQ(j["log_history"].size(), 5u);
  EXPECT_EQ(j["stateful_callbacks"]["TrainerControl"]["args"]["should_training_stop"], true);
}

TEST(HfOutputs, BestModelFieldsFromModelSelection) {
  const fs::path d = fresh_dir("best");
  fs::create_directories(d / "checkpoint-20");
  HfStateInfo i;
  apply_selection(i, nullptr, d, 30);  // no selection: HF's nulls
  EXPECT_TRUE(hf_trainer_state(i, nlohmann::json::array())["best_model_checkpoint"].is_null());
  apply_selection(i, {{"best_metric", 0.75}, {"best_step", 20}}, d, 30);
  auto j = hf_trainer_state(i, nlohmann::json::array());
  EXPECT_EQ(j["best_metric"], 0.75);
  EXPECT_EQ(j["best_model_checkpoint"], (d / "checkpoint-20").string());
  HfStateInfo k;
  apply_selection(k, {{"best_metric", 0.5}, {"best_step", 40}}, d, 40);  // the checkpoint being written
  EXPECT_EQ(hf_trainer_state(k, nlohmann::json::array())["best_model_checkpoint"], (d / "checkpoint-40").string());
  HfStateInfo gone;
  apply_selection(gone, {{"best_metric", 0.5}, {"best_step", 50}}, d, 60);  // neither there nor being written
  EXPECT_TRUE(hf_trainer_state(gone, nlohmann::json::array())["best_model_checkpoint"].is_null());
  fs::remove_all(d);
}

TEST(HfOutputs, StateFromTheTrainersSettings) {
  const nlohmann::json s = {{"per_device_train_batch_size", 40}, {"total_steps", 15}, {"steps_per_epoch", 3},
                            {"logging_steps", 10}, {"eval_steps", 0}, {"save_steps", 5}, {"num_train_epochs", 5.0}};
  const HfStateInfo i = hf_state_of_settings(s, 6);
  EXPECT_EQ(i.max_steps, 15);
  EXPECT_EQ(i.train_batch_size, 40);
  EXPECT_DOUBLE_EQ(i.epoch(), 2.0);
  const fs::path d = fresh_dir("state");
  MetricsLog log(d / "metrics.jsonl", false, 0);
  log.write(WindowRecord{3, 1.0, 2.0, 1e-5, 1, 1, 1});
  log.write(WindowRecord{9, 3.0, 1.0, 1e-5, 1, 1, 1});
  write_hf_trainer_state(d / "trainer_state.json", d / "metrics.jsonl", i);
  const auto j = read_json_file(d / "trainer_state.json");
  ASSERT_EQ(j["log_history"].size(), 1u);  // what was logged by step 6
  EXPECT_EQ(j["log_history"][0]["step"], 3);
  fs::remove_all(d);
}

TEST(HfOutputs, SaveMetricsMergesIntoTheSplitFileAndAllResults) {
  const fs::path d = fresh_dir("metrics");
  write_json_atomic(d / "train_results.json", {{"train_runtime", 1.0}, {"data_wait_percent", 3.0}});
  save_hf_metrics(d, "train", {{"train_runtime", 2.0}, {"epoch", 5.0}});
  save_hf_metrics(d, "eval", {{"eval_loss", 1.5}, {"epoch", 5.0}});
  save_hf_metrics(d, "test", {{"test_loss", 1.25}});
  const auto train = read_json_file(d / "train_results.json");
  EXPECT_EQ(train["data_wait_percent"], 3.0);  // bridgetune's own key stays
  EXPECT_EQ(train["train_runtime"], 2.0);
  EXPECT_EQ(read_json_file(d / "eval_results.json"), (nlohmann::json{{"eval_loss", 1.5}, {"epoch", 5.0}}));
  const auto all = read_json_file(d / "all_results.json");
  for (const char* k : {"train_runtime", "epoch", "eval_loss", "test_loss"}) EXPECT_TRUE(all.contains(k)) << k;
  EXPECT_FALSE(all.contains("data_wait_percent"));  // only what was saved as metrics
  // The trainer's own keys go into train_results.json in the same write, and not into all_results.json.
  save_hf_metrics(d, "train", {{"train_loss", 0.5}}, {{"global_step", 7}, {"train_loss", 9.0}});
  EXPECT_EQ(read_json_file(d / "train_results.json")["global_step"], 7);
  EXPECT_EQ(read_json_file(d / "train_results.json")["train_loss"], 0.5);  // HF's value wins a clash
  EXPECT_FALSE(read_json_file(d / "all_results.json").contains("global_step"));
  fs::remove_all(d);
}

TEST(HfOutputs, ModelCardNamesBaseModelDataHyperparametersAndResults) {
  ModelCard c;
  c.model_name = "bridgetower-test";
  c.base_model = "BridgeTower/bridgetower-large-itm-mlm-itc";
  c.dataset = "jmhessel/newyorker_caption_contest";
  c.dataset_config = "matching";
  c.hyperparameters = {{"learning_rate", 1e-5}, {"train_batch_size", 40}};
  c.eval_metrics = {{"eval_loss", 1.5}, {"eval_runtime", 2.0}};
  c.log_history = hf_log_history(records(), 100, 20);
  const std::string md = model_card_markdown(c);
  for (const char* s : {"base_model: BridgeTower/bridgetower-large-itm-mlm-itc",
                        "- jmhessel/newyorker_caption_contest",
                        "[BridgeTower/bridgetower-large-itm-mlm-itc](https://huggingface.co/BridgeTower/",
                        "- Loss: 1.5000", "- learning_rate: 1e-05", "- train_batch_size: 40",
                        "| Training Loss | Epoch | Step | Validation Loss | I2t R1 | Samples |",
                        "| 2.5000 | 1.0000 | 20 | 1.5000 | 0.2500 | 8 |", "| 2.0000 | 1.5000 | 30 | 1.0000 |  |  |"})
    EXPECT_NE(md.find(s), std::string::npos) << s << "\n" << md;
  EXPECT_EQ(md.find("Runtime"), std::string::npos);  // speed figures are no results
}
