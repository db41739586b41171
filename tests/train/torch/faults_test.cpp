// What clusters and long runs do to a training run (issue 42): preemption (SIGTERM: the step finishes, is saved,
// the exit status says so, `latest_or_none` resumes it), a closed stdout, and divergence (non-finite steps are
// never applied; a few in a row stop the run with one line, and nothing non-finite is written).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "data/synth.h"
#include "report/run_log.h"
#include "run_bridgetune.h"

namespace fs = std::filesystem;

namespace {

class Faults : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_faults_" + std::to_string(getpid()));
    fs::remove_all(root_);
    bt::data::SynthOptions so;
    so.n = 48, so.images = 16, so.seed = 5, so.min_width = 96, so.max_width = 128, so.threads = 2;
    bt::data::write_synth((root_ / "data").string(), so);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static std::vector<std::string> args(const fs::path& out, int steps, const std::string& lr = "1e-3") {
    return {"train", "--train_file", (root_ / "data").string(), "--output_dir", out.string(), "--image_size", "32",
            "--per_device_train_batch_size", "8", "--max_steps", std::to_string(steps), "--logging_steps", "1",
            "--learning_rate", lr, "--torch_threads", "1", "--dataloader_num_workers", "1"};
  }
  static size_t records(const fs::path& out) {
    std::error_code ec;
    return fs::exists(out / "metrics.jsonl", ec) ? bt::report::read_window_records(out / "metrics.jsonl").size() : 0;
  }
  static inline fs::path root_;
};

TEST_F(Faults, SigtermSavesTheStepItFinishedAndLatestOrNoneResumesIt) {
  const fs::path out = root_ / "preempted", log = root_ / "preempted.log";
  std::vector<std::string> a = args(out, 100000);  // far more than the test waits for
  a.insert(a.end(), {"--resume_from_checkpoint", "latest_or_none"});  // the requeue script's first run
  const pid_t pid = bt::test::spawn_bridgetune(a, log);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (records(out) < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_GE(records(out), 3u) << bt::test::slurp(log);
  kill(pid, SIGTERM);
  EXPECT_EQ(bt::test::wait_exit_code(pid), 128 + SIGTERM);
  const std::string text = bt::test::slurp(log);
  EXPECT_NE(text.find("no checkpoint in " + out.string() + " yet: starting from scratch"), std::string::npos) << text;
  const size_t at = text.find("stopped by SIGTERM after step ");
  ASSERT_NE(at, std::string::npos) << text;
  const int64_t step = std::stoll(text.substr(at + 30));
  EXPECT_TRUE(fs::is_directory(out / ("checkpoint-" + std::to_string(step)))) << text;
  EXPECT_FALSE(fs::exists(out / "train_results.json"));  // stopped, not finished
  // The same command (the requeue) resumes that step and finishes.
  a = args(out, int(step) + 2);
  a.insert(a.end(), {"--resume_from_checkpoint", "latest_or_none"});
  EXPECT_EQ(bt::test::wait_exit_code(bt::test::spawn_bridgetune(a, root_ / "requeued.log")), 0)
      << bt::test::slurp(root_ / "requeued.log");
  EXPECT_NE(bt::test::slurp(root_ / "requeued.log").find("at step " + std::to_string(step)), std::string::npos);
  EXPECT_TRUE(fs::exists(out / "train_results.json"));
}

TEST_F(Faults, AClosedStdoutDoesNotEndTheRun) {
  const fs::path out = root_ / "piped";
  std::string cmd = std::string(BT_BRIDGETUNE_EXE);
  for (const auto& s : args(out, 12)) cmd += " '" + s + "'";
  // head exits after one line: every later write of bridgetune's meets a closed pipe.
  cmd = "bash -c \"" + cmd + " 2>&1 | head -n 1 >/dev/null; exit \\${PIPESTATUS[0]}\"";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_TRUE(fs::exists(out / "train_results.json"));
}

// --learning_rate 1e6: the loss is NaN from step 2. No NaN step is applied or saved, the run stops after
// --max_nonfinite_steps of them with one line, every file it wrote parses (no NaN in JSON), and no final model.
TEST_F(Faults, DivergenceStopsWithOneLineAndWritesNothingNonFinite) {
  const fs::path out = root_ / "diverged", log = root_ / "diverged.log";
  std::vector<std::string> a = args(out, 30, "1e6");
  a.insert(a.end(), {"--save_steps", "1", "--max_nonfinite_steps", "2"});
  EXPECT_EQ(bt::test::wait_exit_code(bt::test::spawn_bridgetune(a, log)), 1);
  const std::string text = bt::test::slurp(log);
  EXPECT_NE(text.find("error: training diverged: 2 steps in a row"), std::string::npos) << text;
  EXPECT_NE(text.find("--learning_rate 1e+06 is too high"), std::string::npos) << text;
  EXPECT_NE(text.find("not finite, skipped (the weights are unchanged; 1 in a row"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(out / "model.safetensors"));
  EXPECT_FALSE(fs::exists(out / "train_results.json"));
  for (const auto& r : bt::report::read_window_records(out / "metrics.jsonl")) EXPECT_TRUE(std::isfinite(r.loss));
  // Checkpoints only of steps with a finite loss: step 1's (the loss is NaN from step 2 on).
  EXPECT_TRUE(fs::is_directory(out / "checkpoint-1")) << text;
  EXPECT_FALSE(fs::exists(out / "checkpoint-2")) << text;
}

}  // namespace
