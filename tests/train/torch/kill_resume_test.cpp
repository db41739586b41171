// Crash safety end to end: SIGKILL a training run at >= 20 random moments around checkpoint saves and rotation
// (a checkpoint every step, keeping 2, so every step saves and rotates), resuming each time with
// --resume_from_checkpoint latest. Every resume must start, no listed checkpoint may be incomplete, and the
// finished run's per-step losses must equal an uninterrupted run's exactly.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "data/synth.h"
#include "report/run_log.h"
#include "run_bridgetune.h"
#include "train/checkpoint_dir.h"

namespace fs = std::filesystem;

namespace {

std::vector<double> losses(const fs::path& out) {
  std::vector<double> l;
  for (const auto& r : bt::report::read_window_records(out / "metrics.jsonl")) l.push_back(r.loss);
  return l;
}

TEST(KillResume, TwentySigkillsAroundSavesThenResumeLatestReproducesLosses) {
  const fs::path root = fs::temp_directory_path() / ("bt_kill_resume_" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  bt::data::SynthOptions so;
  so.n = 24;
  so.images = 8;
  so.seed = 5;
  so.min_width = 40, so.max_width = 48;
  so.threads = 1;
  bt::data::write_synth((root / "data").string(), so);
  auto args = [&](const fs::path& out) {
    return std::vector<std::string>{"train", "--train_file", (root / "data").string(), "--output_dir", out.string(),
                                    "--image_size", "32", "--per_device_train_batch_size", "4", "--max_steps", "6",
                                    "--logging_steps", "1", "--learning_rate", "1e-3", "--torch_threads", "1",
                                    "--dataloader_num_workers", "1", "--save_steps", "1", "--save_total_limit", "2",
                                    "--eval_steps", "0", "--throughput_warmup_steps", "1"};
  };
  const fs::path ref_out = root / "ref";
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(bt::test::wait_exit_code(bt::test::spawn_bridgetune(args(ref_out), root / "ref.log")), 0)
      << bt::test::slurp(root / "ref.log");
  const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto ref = losses(ref_out);
  ASSERT_EQ(ref.size(), 6u);

  const fs::path out = root / "run";
  std::mt19937 rng(1234);
  // Kill anywhere in the run's second half-ish, where the steps (and their saves/rotations) happen.
  std::uniform_real_distribution<double> when(0.35 * run_s, 1.05 * run_s);
  int kills = 0, finished = 0, attempts = 0;
  while (kills < 20 && attempts < 60) {
    ++attempts;
    if (fs::exists(out / "train_results.json")) {
      // A run got to the end between kills: it must match, then start over for more kills.
      EXPECT_EQ(losses(out), ref);
      ++finished;
      fs::remove_all(out);
    }
    std::vector<std::string> a = args(out);
    if (!bt::train::list_checkpoints(out).empty()) a.insert(a.end(), {"--resume_from_checkpoint", "latest"});
    const fs::path log = root / ("try" + std::to_string(attempts) + ".log");
    const pid_t pid = bt::test::spawn_bridgetune(a, log);
    std::this_thread::sleep_for(std::chrono::duration<double>(when(rng)));
    ::kill(pid, SIGKILL);
    const int code = bt::test::wait_exit_code(pid);
    if (code == 128 + SIGKILL) ++kills;
    else ASSERT_EQ(code, 0) << "attempt " << attempts << ": " << bt::test::slurp(log);
    for (const auto& ck : bt::train::list_checkpoints(out))
      EXPECT_EQ(bt::train::checkpoint_problem(ck.path), "") << "attempt " << attempts << ": " << ck.path;
  }
  EXPECT_GE(kills, 20);
  // Finish the last interrupted run.
  std::vector<std::string> a = args(out);
  if (!fs::exists(out / "train_results.json")) {
    if (!bt::train::list_checkpoints(out).empty()) a.insert(a.end(), {"--resume_from_checkpoint", "latest"});
    ASSERT_EQ(bt::test::wait_exit_code(bt::test::spawn_bridgetune(a, root / "final.log")), 0)
        << bt::test::slurp(root / "final.log");
  }
  EXPECT_EQ(losses(out), ref);
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    EXPECT_NE(name.rfind(".tmp-", 0), 0u) << name;
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << name;
  }
  std::printf("kills %d, runs finished between kills %d, attempts %d, straight run %.2f s\n", kills, finished,
              attempts, run_s);
  fs::remove_all(root);
}

}  // namespace
