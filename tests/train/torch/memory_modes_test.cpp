// The memory modes of `train`, end to end through the built executable: exact contrastive accumulation
// (train/torch/contrastive_step.h: K micro-batches of B train the weights one batch of K x B trains, HF's local
// accumulation does not, pass 2 replays pass 1's dropout masks) and gradient checkpointing
// (model/grad_checkpoint.h: the same gradients as without it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "data/synth.h"
#include "model/bridgetower.h"
#include "report/run_log.h"
#include "run_bridgetune.h"

namespace fs = std::filesystem;

namespace {

class MemoryModes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_accum_" + std::to_string(getpid()));
    fs::remove_all(root_);
    bt::data::SynthOptions so;
    so.n = 48, so.images = 16, so.seed = 3, so.min_width = 96, so.max_width = 128, so.threads = 2;
    bt::data::write_synth((root_ / "data").string(), so);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  // 3 steps of the tiny preset at 32 px; the dedupe is on (the default), so the exact mode's batches must
  // also hold the rows of the K x B batch.
  static fs::path train(const std::string& name, std::vector<std::string> more) {
    const fs::path out = root_ / name;
    std::vector<std::string> args = {"train", "--train_file", (root_ / "data").string(), "--output_dir", out.string(),
                                     "--image_size", "32", "--max_steps", "3", "--logging_steps", "1",
                                     "--learning_rate", "1e-3", "--torch_threads", "1", "--dataloader_num_workers",
                                     "2", "--eval_steps", "0", "--save_steps", "0"};
    args.insert(args.end(), more.begin(), more.end());
    const int code = bt::test::wait_exit_code(bt::test::spawn_bridgetune(args, root_ / (name + ".log")));
    EXPECT_EQ(code, 0) << bt::test::slurp(root_ / (name + ".log"));
    return out;
  }
  static std::map<std::string, torch::Tensor> weights(const fs::path& dir) {  // a run's or a checkpoint's
    return bt::model::load_tensors((dir / "model.safetensors").string());
  }
  // ||a - b|| over all weights (L2; a max-abs measure would be dominated by Adam's sign-like steps on
  // parameters whose gradient is ~0, where float noise decides the direction).
  static double l2_diff(const std::map<std::string, torch::Tensor>& a, const std::map<std::string, torch::Tensor>& b) {
    double m = 0;
    for (const auto& [k, t] : a) m += (t - b.at(k)).to(torch::kDouble).pow(2).sum().item<double>();
    return std::sqrt(m);
  }
  static double first_loss(const fs::path& out) { return bt::report::read_window_records(out / "metrics.jsonl").at(0).loss; }
  static inline fs::path root_;
};

TEST_F(MemoryModes, ExactEqualsOneLargeBatchAndLocalDoesNot) {
  const auto init = weights(train("init", {"--per_device_train_batch_size", "16", "--learning_rate", "0", "--dropout", "0"}));
  const fs::path big = train("big", {"--per_device_train_batch_size", "16", "--dropout", "0"});
  const fs::path exact = train("exact", {"--per_device_train_batch_size", "4", "--gradient_accumulation_steps", "4",
                                         "--dropout", "0"});
  const fs::path local = train("local", {"--per_device_train_batch_size", "4", "--gradient_accumulation_steps", "4",
                                         "--dropout", "0", "--contrastive_accumulation", "local"});
  const auto w_big = weights(big);
  const double update = l2_diff(w_big, init);
  ASSERT_GT(update, 1e-4);
  EXPECT_LE(l2_diff(weights(exact), w_big), 1e-3 * update);  // measured 6.6e-5 of it
  EXPECT_GT(l2_diff(weights(local), w_big), 0.1 * update);  // each micro-batch its own negatives (measured 0.87)
  EXPECT_NEAR(first_loss(exact), first_loss(big), 1e-5);      // the logged loss is the 16-row batch's (~ln 16)
  EXPECT_LT(first_loss(local), first_loss(big) - 0.5);        // ~ln 4
}

TEST_F(MemoryModes, DropoutMasksAreReplayed) {
  const fs::path out = train("dropout", {"--per_device_train_batch_size", "4", "--gradient_accumulation_steps", "3",
                                         "--dropout", "0.3"});
  const auto res = bt::report::read_json_file(out / "train_results.json");
  // Pass 2's embeddings equal pass 1's: the same masks (different masks move them by ~dropout's size).
  EXPECT_LE(res.at("accumulation_replay_max_diff").get<double>(), 1e-6);
}

// An interrupted run with exact accumulation (and dropout) resumes into the same per-step losses.
TEST_F(MemoryModes, ResumesExactly) {
  const std::vector<std::string> args = {"--per_device_train_batch_size", "4", "--gradient_accumulation_steps", "2",
                                         "--dropout", "0.1", "--max_steps", "4", "--save_steps", "2"};
  const fs::path full = train("resume_full", args);
  auto cut_args = args;
  cut_args.insert(cut_args.end(), {"--stop_after_step", "2"});
  const fs::path cut = train("resume_cut", cut_args);
  auto resume_args = args;
  resume_args.insert(resume_args.end(), {"--resume_from_checkpoint", "latest"});
  train("resume_cut", resume_args);
  const auto a = bt::report::read_window_records(full / "metrics.jsonl"), b = bt::report::read_window_records(cut / "metrics.jsonl");
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_DOUBLE_EQ(b[i].loss, a[i].loss) << "step " << i + 1;
}

TEST_F(MemoryModes, CheckpointingKeepsTheGradients) {
  const std::vector<std::string> args = {"--per_device_train_batch_size", "8", "--dropout", "0.1", "--max_steps", "2"};
  const auto init = weights(train("ckpt_init", {"--per_device_train_batch_size", "8", "--learning_rate", "0"}));
  const auto plain = weights(train("ckpt_off", args));
  auto with = args;
  with.push_back("--gradient_checkpointing");
  EXPECT_LE(l2_diff(weights(train("ckpt_on", with)), plain), 1e-3 * l2_diff(plain, init));  // measured: equal
}

// Both at once: 2 micro-batches of 4 with checkpointing train one batch of 8.
TEST_F(MemoryModes, CheckpointingWithExactAccumulation) {
  const auto big = weights(train("both_big", {"--per_device_train_batch_size", "8", "--dropout", "0"}));
  const auto init = weights(train("both_init", {"--per_device_train_batch_size", "8", "--learning_rate", "0"}));
  const auto both = weights(train("both", {"--per_device_train_batch_size", "4", "--gradient_accumulation_steps", "2",
                                           "--dropout", "0", "--gradient_checkpointing"}));
  EXPECT_LE(l2_diff(both, big), 1e-3 * l2_diff(big, init));
}

// The fp16 loss scaler's logic in fp32 on the CPU (--test_loss_scaling): scaling by a power of two is exact, so
// without inf/NaN it trains the plain run's weights; a step with a NaN gradient is skipped (no update) and halves
// the scale; an interrupted run resumes with the scaler's state.
TEST_F(MemoryModes, LossScalerSkipsNonFiniteStepsAndResumesExactly) {
  const std::vector<std::string> args = {"--per_device_train_batch_size", "8", "--dropout", "0", "--max_steps", "4",
                                         "--save_steps", "1"};
  auto with = [&](std::initializer_list<std::string> more) {
    auto a = args;
    a.insert(a.end(), more);
    return a;
  };
  const auto plain = weights(train("scaler_plain", args));
  EXPECT_EQ(l2_diff(weights(train("scaler_clean", with({"--test_loss_scaling"}))), plain), 0.0);
  const fs::path nan = train("scaler_nan", with({"--test_loss_scaling", "--test_inject_nonfinite_at_step", "2"}));
  EXPECT_NE(bt::test::slurp(root_ / "scaler_nan.log").find("step 2: inf/NaN gradients, no update (fp16 loss scale now 32768)"),
            std::string::npos);
  EXPECT_EQ(l2_diff(weights(nan / "checkpoint-2"), weights(nan / "checkpoint-1")), 0.0);  // step 2 changed nothing
  EXPECT_GT(l2_diff(weights(nan / "checkpoint-3"), weights(nan / "checkpoint-2")), 0.0);
  const auto res = bt::report::read_json_file(nan / "train_results.json");
  EXPECT_EQ(res.at("skipped_steps"), 1);
  EXPECT_EQ(res.at("loss_scale").get<double>(), 32768.0);
  const fs::path cut = train("scaler_cut", with({"--test_loss_scaling", "--test_inject_nonfinite_at_step", "2",
                                                 "--stop_after_step", "3"}));
  train("scaler_cut", with({"--test_loss_scaling", "--test_inject_nonfinite_at_step", "2", "--resume_from_checkpoint",
                            "latest"}));
  EXPECT_EQ(l2_diff(weights(cut), weights(nan)), 0.0);
  EXPECT_EQ(bt::report::read_json_file(cut / "train_results.json").at("loss_scale").get<double>(), 32768.0);
}

}  // namespace
