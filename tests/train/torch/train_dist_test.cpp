// `bridgetune train` as several processes (RANK/WORLD_SIZE/MASTER_* as torchrun sets them, on a free loopback
// port), checked against one process; plus resume guards and the tar / parquet inputs.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "checkpoint/safetensors.h"
#include "data/synth.h"
#include "dist/process_group.h"
#include "report/run_log.h"
#include "run_bridgetune.h"
#include "train/checkpoint_dir.h"
#include "train/output_lock.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

int free_port() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

using bt::test::slurp;
using bt::test::spawn_bridgetune;
using bt::test::wait_exit_code;

struct RunResult {
  std::vector<int> codes;
  std::string output;  // all ranks' logs
};

// world 0: one plain process; else `world` ranks of one job.
RunResult run(const std::vector<std::string>& args, const fs::path& log, int world) {
  const int port = free_port();
  std::vector<pid_t> pids;
  const int n = std::max(world, 1);
  for (int r = 0; r < n; ++r)
    pids.push_back(spawn_bridgetune(args, log.string() + "." + std::to_string(r), world ? r : -1, world, port));
  RunResult out;
  for (int r = 0; r < n; ++r) {
    out.codes.push_back(wait_exit_code(pids[r]));
    out.output += slurp(log.string() + "." + std::to_string(r));
  }
  return out;
}

std::vector<double> losses(const fs::path& out) {
  std::vector<double> l;
  for (const auto& r : bt::report::read_window_records(out / "metrics.jsonl")) l.push_back(r.loss);
  return l;
}

// Largest absolute difference over every F32 tensor of two safetensors files (same names required).
double max_weight_diff(const fs::path& a, const fs::path& b) {
  auto sa = bt::checkpoint::SafeTensors::open(a.string()), sb = bt::checkpoint::SafeTensors::open(b.string());
  EXPECT_EQ(sa.tensors().size(), sb.tensors().size());
  double worst = 0;
  for (const auto& t : sa.tensors()) {
    const auto* u = sb.find(t.name);
    if (!u) {
      ADD_FAILURE() << "missing " << t.name;
      continue;
    }
    EXPECT_EQ(t.nbytes, u->nbytes) << t.name;
    if (t.dtype != bt::checkpoint::DType::F32 || t.nbytes != u->nbytes) continue;
    const float* x = reinterpret_cast<const float*>(t.data);
    const float* y = reinterpret_cast<const float*>(u->data);
    for (int64_t i = 0; i < t.numel(); ++i) worst = std::max(worst, std::fabs(double(x[i]) - double(y[i])));
  }
  return worst;
}

class TrainDist : public ::testing::Test {
 protected:
  // A build without Gloo (pip's libtorch) trains one process only; CI's build requires Gloo (BT_DIST_GLOO=ON).
  void SetUp() override {
    if (!bt::dist::have_gloo()) GTEST_SKIP() << "this build has no Gloo (multi-process CPU training disabled)";
  }
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_train_dist_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    bt::data::SynthOptions so;
    so.n = 48;
    so.images = 16;  // rows share images: the dedupe matters
    so.seed = 5;
    so.min_width = 64, so.max_width = 96;
    so.threads = 2;
    bt::data::write_synth((root_ / "data").string(), so);
    so.tar = true;
    so.shard_size = 16;
    bt::data::write_synth((root_ / "shards").string(), so);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  // Deterministic and fast: tiny preset at 32 px, dropout off, one torch thread, dedupe on (the default).
  static std::vector<std::string> base(const fs::path& out, int batch, int steps) {
    return {"train", "--train_file", (root_ / "data").string(), "--output_dir", out.string(), "--image_size", "32",
            "--per_device_train_batch_size", std::to_string(batch), "--max_steps", std::to_string(steps),
            "--logging_steps", "1", "--learning_rate", "5e-3", "--torch_threads", "1", "--dataloader_num_workers", "1",
            "--throughput_warmup_steps", "1", "--dropout", "0", "--ddp_timeout", "60"};
  }
  static std::vector<std::string> with(std::vector<std::string> a, std::initializer_list<std::string> more) {
    a.insert(a.end(), more);
    return a;
  }
  static void expect_ok(const RunResult& r) {
    for (int c : r.codes) EXPECT_EQ(c, 0) << r.output;
  }
  static void expect_same_losses(const std::vector<double>& a, const std::vector<double>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * std::max(1.0, std::fabs(a[i]))) << "step " << i + 1;
  }
  static inline fs::path root_;
};

TEST_F(TrainDist, TwoRanksGatheringEqualOneRankAtDoubleBatch) {
  const fs::path one = root_ / "one", two = root_ / "two";
  // A larger Adam epsilon keeps AdamW from blowing float noise in near-zero gradients up to full-size steps.
  expect_ok(run(with(base(one, 8, 6), {"--gather_embeddings", "--adam_epsilon", "1e-4"}), root_ / "one.log", 0));
  auto r = run(with(base(two, 4, 6), {"--gather_embeddings", "--adam_epsilon", "1e-4"}), root_ / "two.log", 2);
  expect_ok(r);
  EXPECT_NE(r.output.find("data parallel: 2 processes"), std::string::npos) << r.output;
  ASSERT_EQ(losses(one).size(), 6u);
  expect_same_losses(losses(one), losses(two));
  EXPECT_LT(max_weight_diff(one / "model.safetensors", two / "model.safetensors"), 1e-5);
  // train_samples_per_second etc. count the global batch; only rank 0 wrote results.
  const auto res = nlohmann::json::parse(slurp(two / "train_results.json"));
  EXPECT_EQ(res["world_size"], 2);
  EXPECT_EQ(res["train_samples"], nlohmann::json::parse(slurp(one / "train_results.json"))["train_samples"]);
}

// Exact contrastive accumulation across ranks: 2 ranks x 2 micro-batches of 2, gathered, train one batch of 8.
TEST_F(TrainDist, ExactAccumulationOverTwoRanksEqualsOneBatch) {
  const fs::path one = root_ / "accum_one", two = root_ / "accum_two";
  expect_ok(run(with(base(one, 8, 4), {"--gather_embeddings", "--adam_epsilon", "1e-4"}), root_ / "accum_one.log", 0));
  auto r = run(with(base(two, 2, 4), {"--gather_embeddings", "--adam_epsilon", "1e-4", "--gradient_accumulation_steps",
                                      "2"}),
               root_ / "accum_two.log", 2);
  expect_ok(r);
  expect_same_losses(losses(one), losses(two));
  EXPECT_LT(max_weight_diff(one / "model.safetensors", two / "model.safetensors"), 1e-5);
}

TEST_F(TrainDist, WithoutGatherTrainsAndDiffersFromGlobalLoss) {
  // Without --gather_embeddings each rank's loss has only its own B-1 negatives: a smaller loss than the
  // global one (ln B vs ln 2B at init), still averaged into one model.
  const fs::path two = root_ / "two_local";
  auto r = run(base(two, 4, 2), root_ / "local.log", 2);
  expect_ok(r);
  auto l = losses(two);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_LT(l[0], std::log(6.0)) << "per-rank loss should be near ln 4";
  EXPECT_TRUE(fs::exists(two / "model.safetensors"));
}

TEST_F(TrainDist, KilledRankMakesThePeerFailWithinTheTimeout) {
  const fs::path out = root_ / "killed";
  auto args = with(base(out, 4, 100000), {"--save_steps", "2", "--save_total_limit", "1"});
  args[args.size() - 5] = "20";  // --ddp_timeout
  ASSERT_EQ(args[args.size() - 6], "--ddp_timeout");
  const int port = free_port();
  pid_t r0 = spawn_bridgetune(args, root_ / "killed.log.0", 0, 2, port);
  pid_t r1 = spawn_bridgetune(args, root_ / "killed.log.1", 1, 2, port);
  const auto t0 = Clock::now();
  // A checkpoint folder shows that both ranks are in the step loop (rank 0's logs are buffered).
  auto training = [&] { return !bt::train::list_checkpoints(out).empty(); };
  while (!training() && Clock::now() - t0 < std::chrono::seconds(60) && kill(r0, 0) == 0 && kill(r1, 0) == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!training()) {
    kill(r0, SIGKILL), kill(r1, SIGKILL), wait_exit_code(r0), wait_exit_code(r1);
    FAIL() << "no checkpoint after 60 s: " << slurp(root_ / "killed.log.0");
  }
  kill(r1, SIGKILL);
  wait_exit_code(r1);
  const auto t_kill = Clock::now();
  int code = -1;
  while (Clock::now() - t_kill < std::chrono::seconds(45)) {
    int status = 0;
    if (waitpid(r0, &status, WNOHANG) == r0) {
      code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (code == -1) {
    kill(r0, SIGKILL);
    wait_exit_code(r0);
    FAIL() << "rank 0 still ran 45 s after its peer died";
  }
  const std::string log = slurp(root_ / "killed.log.0");
  EXPECT_EQ(code, 1) << "want a bt::Error exit, not a signal (141 = SIGPIPE)\n" << log;
  EXPECT_NE(log.find("error: rank 0"), std::string::npos) << log;
}

// torchrun's launcher SIGKILLed (it can forward nothing): each rank gets SIGTERM from the kernel (parent-death
// signal), saves the step and exits 128 + SIGTERM, and the output folder's lock is free again. The test process
// stands in for init (a subreaper), so the orphaned ranks' exit statuses are its to read.
TEST_F(TrainDist, RanksStopWhenTheirLauncherIsKilled) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const fs::path out = root_ / "orphans";
  const auto args = with(base(out, 4, 100000), {"--save_steps", "1", "--save_total_limit", "1"});
  const int port = free_port();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t launcher = fork();
  if (launcher == 0) {  // the launcher: starts both ranks, says their pids, waits to be killed
    pid_t ranks[2];
    for (int r = 0; r < 2; ++r)
      ranks[r] = spawn_bridgetune(args, root_ / ("orphans.log." + std::to_string(r)), r, 2, port, /*launched=*/true);
    (void)!write(fds[1], ranks, sizeof ranks);
    for (;;) pause();
  }
  close(fds[1]);
  pid_t ranks[2] = {-1, -1};
  ASSERT_EQ(read(fds[0], ranks, sizeof ranks), ssize_t(sizeof ranks));
  close(fds[0]);
  const auto t0 = Clock::now();
  while (bt::train::list_checkpoints(out).empty() && Clock::now() - t0 < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(launcher, SIGKILL);
  wait_exit_code(launcher);
  for (int r = 0; r < 2; ++r) {
    int code = -1;
    for (const auto t_kill = Clock::now(); code < 0 && Clock::now() - t_kill < std::chrono::seconds(45);) {
      int status = 0;
      if (waitpid(ranks[r], &status, WNOHANG) == ranks[r])
        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (code < 0) kill(ranks[r], SIGKILL), wait_exit_code(ranks[r]);
    const std::string log = slurp(root_ / ("orphans.log." + std::to_string(r)));
    EXPECT_EQ(code, 128 + SIGTERM) << "rank " << r << " (-1: still running 45 s after its launcher died)\n" << log;
    if (r == 0) {
      EXPECT_NE(log.find("stopped by SIGTERM after step "), std::string::npos) << log;
    }
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  EXPECT_NO_THROW(bt::train::OutputDirLock::acquire(out));  // released: the next run may take the folder
  const auto listed = bt::train::list_checkpoints(out);
  ASSERT_FALSE(listed.empty());
  EXPECT_EQ(bt::train::checkpoint_problem(listed.back().path), "");
}

// A rank still connecting to its job's store (rank 0 never came up) when the launcher is SIGKILLed: it has nothing
// to save and stops at once, instead of retrying the dead launcher's port until --ddp_timeout (60 s here) and
// joining whichever job takes the port next.
TEST_F(TrainDist, AStartingRankStopsWhenItsLauncherIsKilled) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const fs::path out = root_ / "starting";
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t launcher = fork();
  if (launcher == 0) {
    pid_t rank = spawn_bridgetune(base(out, 4, 10), root_ / "starting.log", 1, 2, free_port(), /*launched=*/true);
    (void)!write(fds[1], &rank, sizeof rank);
    for (;;) pause();
  }
  close(fds[1]);
  pid_t rank = -1;
  ASSERT_EQ(read(fds[0], &rank, sizeof rank), ssize_t(sizeof rank));
  close(fds[0]);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // connecting, retrying
  kill(launcher, SIGKILL);
  wait_exit_code(launcher);
  int code = -1;
  for (const auto t0 = Clock::now(); code < 0 && Clock::now() - t0 < std::chrono::seconds(10);) {
    int status = 0;
    if (waitpid(rank, &status, WNOHANG) == rank)
      code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (code < 0) kill(rank, SIGKILL), wait_exit_code(rank);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  EXPECT_EQ(code, 128 + SIGTERM) << "(-1: still running 10 s after its launcher died)\n" << slurp(root_ / "starting.log");
  EXPECT_NE(slurp(root_ / "starting.log").find("nothing to save"), std::string::npos) << slurp(root_ / "starting.log");
}

TEST_F(TrainDist, InterruptedTwoRankRunResumesLatestWithTheSameLosses) {
  const fs::path full = root_ / "full", cut = root_ / "cut";
  expect_ok(run(with(base(full, 4, 6), {"--gather_embeddings"}), root_ / "full.log", 2));
  expect_ok(run(with(base(cut, 4, 6), {"--gather_embeddings", "--save_steps", "3", "--stop_after_step", "3"}),
                root_ / "cut.log", 2));
  ASSERT_TRUE(fs::exists(cut / "checkpoint-3" / "trainer_state.json"));
  EXPECT_FALSE(fs::exists(cut / "train_results.json"));
  auto r = run(with(base(cut, 4, 6), {"--gather_embeddings", "--save_steps", "3", "--resume_from_checkpoint", "latest"}),
               root_ / "resume.log", 2);
  expect_ok(r);
  EXPECT_NE(r.output.find("resumed from"), std::string::npos) << r.output;
  expect_same_losses(losses(full), losses(cut));
  EXPECT_LT(max_weight_diff(full / "model.safetensors", cut / "model.safetensors"), 1e-6);
}

TEST_F(TrainDist, ResumeRefusesAnotherBatchSizeSeedOrWorldSize) {
  const fs::path out = root_ / "guard";
  expect_ok(run(with(base(out, 4, 4), {"--save_steps", "2", "--stop_after_step", "2"}), root_ / "guard.log", 0));
  ASSERT_TRUE(fs::exists(out / "checkpoint-2"));
  auto resume = [&](std::vector<std::string> a) { return with(std::move(a), {"--resume_from_checkpoint", "latest"}); };
  auto r = run(resume(base(out, 8, 4)), root_ / "guard_bs.log", 0);
  EXPECT_EQ(r.codes[0], 1);
  EXPECT_NE(r.output.find("--per_device_train_batch_size"), std::string::npos) << r.output;
  r = run(resume(with(base(out, 4, 4), {"--seed", "7"})), root_ / "guard_seed.log", 0);
  EXPECT_EQ(r.codes[0], 1);
  EXPECT_NE(r.output.find("--seed"), std::string::npos) << r.output;
  r = run(resume(base(out, 4, 4)), root_ / "guard_ws.log", 2);
  for (int c : r.codes) EXPECT_EQ(c, 1) << r.output;
  EXPECT_NE(r.output.find("world size"), std::string::npos) << r.output;
  // Same settings: it continues.
  expect_ok(run(resume(base(out, 4, 4)), root_ / "guard_ok.log", 0));
  EXPECT_EQ(losses(out).size(), 4u);
}

TEST_F(TrainDist, TrainsFromTarShards) {
  const fs::path out = root_ / "tar";
  auto args = base(out, 4, 2);
  args[1] = "--train_shards";
  args[2] = (root_ / "shards" / "shard-{000000..000002}.tar").string();
  auto r = run(args, root_ / "tar.log", 0);
  expect_ok(r);
  EXPECT_EQ(losses(out).size(), 2u);
  EXPECT_TRUE(fs::exists(out / "model.safetensors"));
}

TEST_F(TrainDist, TrainsFromParquet) {
  const fs::path out = root_ / "parquet";
  auto args = base(out, 4, 2);  // HF columns image / image_description: the parquet defaults
  args[2] = std::string(BT_PARQUET_FIXTURES) + "/images_snappy_dict_v1.parquet";
  auto r = run(args, root_ / "parquet.log", 0);
  expect_ok(r);
  EXPECT_EQ(losses(out).size(), 2u);
  EXPECT_TRUE(fs::exists(out / "model.safetensors"));
}

}  // namespace
