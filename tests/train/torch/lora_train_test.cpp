// `train --lora_rank`: only the adapters and the heads train (every other weight is bit-identical to the base),
// the folder holds PEFT's files, the final evaluation reads the adapter folder as the merged model scores it, and
// a resumed LoRA run (and one with gradient checkpointing) continues exactly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "checkpoint/safetensors.h"
#include "data/synth.h"
#include "report/run_log.h"
#include "run_bridgetune.h"

namespace fs = std::filesystem;

namespace {

class LoraTrain : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_lora_train_" + std::to_string(getpid()));
    fs::remove_all(root_);
    bt::data::SynthOptions so;
    so.n = 40, so.images = 12, so.seed = 7, so.min_width = 64, so.max_width = 96, so.threads = 2;
    bt::data::write_synth((root_ / "data").string(), so);
    // The base: the reference tiny checkpoint with a tokenizer beside it.
    fs::create_directories(root_ / "base");
    for (const char* f : {"config.json", "model.safetensors"})
      fs::copy_file(fs::path(BT_TEXT_FIXTURES) / ".." / ".." / "fixtures" / "bridgetower-tiny" / f, root_ / "base" / f);
    for (const char* f : {"vocab.json", "merges.txt"})
      fs::copy_file(fs::path(BT_TEXT_FIXTURES) / "tiny" / f, root_ / "base" / f);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static int train(const fs::path& out, int steps, std::initializer_list<std::string> more) {
    std::vector<std::string> a = {"train", "--model_name_or_path", (root_ / "base").string(), "--train_file",
                                  (root_ / "data").string(), "--output_dir", out.string(),
                                  "--per_device_train_batch_size", "8", "--max_steps", std::to_string(steps),
                                  "--logging_steps", "1", "--learning_rate", "1e-2", "--torch_threads", "1",
                                  "--dataloader_num_workers", "1", "--lora_rank", "4", "--dropout", "0", "--max_seq_length", "32"};
    a.insert(a.end(), more);
    return bt::test::wait_exit_code(bt::test::spawn_bridgetune(a, out.string() + ".log"));
  }
  static std::vector<double> losses(const fs::path& out) {
    std::vector<double> l;
    for (const auto& r : bt::report::read_window_records(out / "metrics.jsonl")) l.push_back(r.loss);
    return l;
  }
  static inline fs::path root_;
};

TEST_F(LoraTrain, OnlyAdaptersAndHeadsTrainAndTheFolderIsPeftsAndMergesToTheSameScores) {
  const fs::path out = root_ / "adapters", merged = root_ / "merged";
  ASSERT_EQ(train(out, 4, {"--validation_file", (root_ / "data").string(), "--do_train", "--do_eval"}), 0) << bt::test::slurp(out.string() + ".log");
  const std::string log = bt::test::slurp(out.string() + ".log");
  EXPECT_NE(log.find("LoRA: rank 4 adapters on "), std::string::npos);
  // One count of what trains (issue 57: "27232 of 649185 parameters train", then "16480 trainable parameters").
  const size_t of = log.find(" of ", log.find("LoRA: rank 4 adapters on ") + 26);
  const size_t trainable = log.find(" trainable parameters)");
  ASSERT_NE(of, std::string::npos);
  ASSERT_NE(trainable, std::string::npos) << log;
  const std::string lora_count = log.substr(log.rfind(' ', of - 1) + 1, of - log.rfind(' ', of - 1) - 1);
  const std::string run_count = log.substr(log.rfind('(', trainable) + 1, trainable - log.rfind('(', trainable) - 1);
  EXPECT_EQ(lora_count, run_count) << log;
  // Every base weight but the trained heads is the base's, bit for bit.
  auto base = bt::checkpoint::SafeTensors::open((root_ / "base" / "model.safetensors").string());
  auto after = bt::checkpoint::SafeTensors::open((out / "model.safetensors").string());
  int same = 0, heads = 0;
  for (const auto& t : base.tensors()) {
    const auto* u = after.find(t.name);
    ASSERT_TRUE(u) << t.name;
    const bool equal = u->nbytes == t.nbytes && std::equal(t.data, t.data + t.nbytes, u->data);
    if (t.name.rfind("itc_", 0) == 0) {
      heads += !equal;
    } else {
      EXPECT_TRUE(equal) << t.name << " changed: it is frozen under LoRA";
      ++same;
    }
  }
  EXPECT_GT(same, 100);
  EXPECT_GT(heads, 0);  // the heads (modules_to_save) trained
  const auto cfg = bt::report::read_json_file(out / "adapter_config.json");
  EXPECT_EQ(cfg["r"], 4);
  EXPECT_EQ(cfg["base_model_name_or_path"], (root_ / "base").string());
  auto adapter = bt::checkpoint::SafeTensors::open((out / "adapter_model.safetensors").string());
  const auto* b = adapter.find("base_model.model.bridgetower.text_model.encoder.layer.0.attention.self.query.lora_B.weight");
  ASSERT_TRUE(b);
  const float* v = reinterpret_cast<const float*>(b->data);
  EXPECT_TRUE(std::any_of(v, v + b->numel(), [](float x) { return x != 0; })) << "B still zero: not trained";
  // --merge_lora: the same training folded into a plain checkpoint; both folders score the same.
  ASSERT_EQ(train(merged, 4, {"--validation_file", (root_ / "data").string(), "--do_train", "--do_eval", "--merge_lora"}), 0)
      << bt::test::slurp(merged.string() + ".log");
  EXPECT_FALSE(fs::exists(merged / "adapter_config.json"));
  const auto a = bt::report::read_json_file(out / "eval_results.json");
  const auto m = bt::report::read_json_file(merged / "eval_results.json");
  // W x + B A x and (W + B A) x differ in their last bits, so near-tied recalls may swap between the folders (a
  // rank is not continuous in the scores): the loss, a smooth function of every logit, carries the comparison.
  for (const char* k : {"eval_loss", "eval_i2t_r1", "eval_t2i_r1"})
    ASSERT_TRUE(a.contains(k) && m.contains(k)) << k << " " << a.dump();
  EXPECT_NEAR(a["eval_loss"].get<double>(), m["eval_loss"].get<double>(), 1e-5);
}

TEST_F(LoraTrain, AResumedRunContinuesExactly) {
  const fs::path straight = root_ / "straight", resumed = root_ / "resumed";
  // A constant rate: the 2-step first half would otherwise decay over 2 steps, not 4.
  ASSERT_EQ(train(straight, 4, {"--lr_scheduler_type", "constant"}), 0) << bt::test::slurp(straight.string() + ".log");
  ASSERT_EQ(train(resumed, 2, {"--save_steps", "2", "--lr_scheduler_type", "constant"}), 0) << bt::test::slurp(resumed.string() + ".log");
  ASSERT_EQ(train(resumed, 4, {"--resume_from_checkpoint", "latest", "--lr_scheduler_type", "constant"}), 0) << bt::test::slurp(resumed.string() + ".log");
  const auto a = losses(straight), b = losses(resumed);
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6 * std::max(1.0, std::fabs(a[i]))) << "step " << i + 1;
  // Gradient checkpointing recomputes the adapted layers in backward: the same steps.
  const fs::path recomputed = root_ / "recomputed";
  ASSERT_EQ(train(recomputed, 4, {"--gradient_checkpointing", "--lr_scheduler_type", "constant"}), 0) << bt::test::slurp(recomputed.string() + ".log");
  const auto c = losses(recomputed);
  ASSERT_EQ(c.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], c[i], 1e-5 * std::max(1.0, std::fabs(a[i]))) << "step " << i + 1;
  // A full fine-tuning resume of a LoRA checkpoint is refused with the reason.
  std::vector<std::string> full = {"train", "--model_name_or_path", (root_ / "base").string(), "--train_file",
                                   (root_ / "data").string(), "--output_dir", resumed.string(), "--max_steps", "6",
                                   "--per_device_train_batch_size", "8", "--max_seq_length", "32", "--resume_from_checkpoint", "latest"};
  EXPECT_EQ(bt::test::wait_exit_code(bt::test::spawn_bridgetune(full, root_ / "full.log")), 1);
  EXPECT_NE(bt::test::slurp(root_ / "full.log").find("it was made with LoRA"), std::string::npos)
      << bt::test::slurp(root_ / "full.log");
}

}  // namespace
