// Crash safety end to end: SIGKILL a training run at 20 random moments around checkpoint saves and rotation
// (a checkpoint every step, keeping 2, so every step saves and rotates), resuming each time with
// --resume_from_checkpoint latest. Every resume must start, no listed checkpoint may be incomplete, and the
// finished run's per-step losses must equal an uninterrupted run's exactly.
//
// The kills must happen, on a machine of any speed: the moment is drawn from a window scaled to this machine's
// straight run, and the window adapts to what the attempts show. A run that finishes before its kill shrinks it
// (the next kill comes earlier), so 20 kills are always reached within the attempts allowed (each finish scales
// the window by 0.7: after ~10 of them a kill lands at once); a kill that found no new checkpoint (still starting up)
// widens it again, so the kills stay among the saves. The test fails unless all 20 kills landed mid-run and at least
// one of them after its attempt had saved a checkpoint: it cannot pass without having killed and resumed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
  std::uniform_real_distribution<double> when(0.35, 1.05);  // x run_s x scale: the run's middle and end
  const auto latest = [&] {
    const auto cks = bt::train::list_checkpoints(out);
    return cks.empty() ? int64_t{0} : cks.back().step;
  };
  constexpr int kKills = 20, kMaxAttempts = 60;
  int kills = 0, kills_after_a_save = 0, finished = 0, attempts = 0;
  double scale = 1.0;
  while (kills < kKills && attempts < kMaxAttempts) {
    ++attempts;
    if (fs::exists(out / "train_results.json")) {
      // A run got to the end between kills: it must match, then start over for more kills.
      EXPECT_EQ(losses(out), ref);
      ++finished;
      fs::remove_all(out);
    }
    std::vector<std::string> a = args(out);
    const int64_t before = latest();
    if (before > 0) a.insert(a.end(), {"--resume_from_checkpoint", "latest"});
    const fs::path log = root / ("try" + std::to_string(attempts) + ".log");
    const pid_t pid = bt::test::spawn_bridgetune(a, log);
    std::this_thread::sleep_for(std::chrono::duration<double>(when(rng) * run_s * scale));
    ::kill(pid, SIGKILL);
    const int code = bt::test::wait_exit_code(pid);
    if (code != 128 + SIGKILL) {
      ASSERT_EQ(code, 0) << "attempt " << attempts << ": " << bt::test::slurp(log);
    }
    if (code == 128 + SIGKILL && !fs::exists(out / "train_results.json")) {
      ++kills;
      if (latest() > before) ++kills_after_a_save;
      else scale = std::min(1.0, scale * 1.1);  // killed while starting up: a little later next time
    } else {
      scale *= 0.7;  // the run finished before the kill: an earlier kill next time
    }
    for (const auto& ck : bt::train::list_checkpoints(out))
      EXPECT_EQ(bt::train::checkpoint_problem(ck.path), "") << "attempt " << attempts << ": " << ck.path;
  }
  ASSERT_EQ(kills, kKills) << "only " << kills << " of " << attempts << " attempts were killed mid-run";
  ASSERT_GE(kills_after_a_save, 1) << "no kill landed after its attempt had saved a checkpoint";
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
  std::printf("kills %d (%d after a save), runs finished between kills %d, attempts %d, straight run %.2f s, "
              "final window scale %.2f\n", kills, kills_after_a_save, finished, attempts, run_s, scale);
  fs::remove_all(root);
}

}  // namespace
