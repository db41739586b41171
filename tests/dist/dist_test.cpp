// Multi-process tests on loopback: each test starts its own ranks (dist_worker) and compares them with a
// single-process reference computed here.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "dist/process_group.h"
#include "launch.h"
#include "toy.h"

namespace bt::dist::testing {
ToyResult bt_reference(const std::string& fixture, int world, bool gather);  // worker_bt.cpp
}

namespace bt::dist::testing {
namespace {

std::string tmp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("bt_dist_" + std::to_string(::getpid()) + "_" + name)).string();
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  ASSERT_FALSE(want.empty()) << what;
  double scale = 0, worst = 0;
  size_t at = 0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(got[i] - want[i]);
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  EXPECT_LE(worst, tol * std::max(1.0, scale)) << what << ": worst at " << at << ": " << got[at] << " vs " << want[at];
}

std::string dump(const std::vector<RankResult>& rs) {
  std::string s;
  for (size_t i = 0; i < rs.size(); ++i)
    s += "--- rank " + std::to_string(i) + " exit " + std::to_string(rs[i].exit_code) + " signal " +
         std::to_string(rs[i].signal) + "\n" + rs[i].output;
  return s;
}

struct ToyCase {
  bool gather, overlap;
  int accum;
};

class ToyJob : public ::testing::TestWithParam<ToyCase> {};

TEST_P(ToyJob, TwoRanksEqualTheReference) {
  const ToyCase c = GetParam();
  const std::string out = tmp_path("toy_{rank}.bin");
  LaunchSpec ls;
  ls.exe = BT_DIST_WORKER;
  ls.args = {"toy", out, c.gather ? "1" : "0", c.overlap ? "1" : "0", std::to_string(c.accum)};
  auto rs = launch(ls);
  for (const auto& r : rs) ASSERT_EQ(r.exit_code, 0) << dump(rs);
  ToySpec spec;
  spec.gather = c.gather;
  spec.overlap = c.overlap;
  spec.accum = c.accum;
  const ToyResult ref = run_toy_reference(spec, 2);
  for (int r = 0; r < 2; ++r) {
    std::string p = out;
    p.replace(p.find("{rank}"), 6, std::to_string(r));
    const ToyResult got = read_result(p);
    std::filesystem::remove(p);
    SCOPED_TRACE("rank " + std::to_string(r));
    // Rank 1 initialised from another seed: the broadcast must have made it rank 0's model.
    expect_close(got.init_params, ref.init_params, 0, "initial parameters");
    expect_close(got.losses, ref.losses, 1e-5, "loss trajectory");
    expect_close(got.first_grads, ref.first_grads, 1e-5, "step-1 gradients");
    expect_close(got.final_params, ref.final_params, 1e-5, "final parameters");
    // Tiny buckets: several of them, and with hooks every one went out during backward (overlap), none after.
    ASSERT_EQ(got.buckets.size(), 2u);
    EXPECT_GE(got.buckets[0], 3);
    EXPECT_EQ(got.buckets[1], c.overlap ? got.buckets[0] : 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Dist, ToyJob,
                         ::testing::Values(ToyCase{false, true, 1}, ToyCase{false, false, 1}, ToyCase{true, true, 1},
                                           ToyCase{true, false, 1}, ToyCase{true, true, 2}, ToyCase{false, true, 2}),
                         [](const auto& info) {
                           return std::string(info.param.gather ? "Gather" : "Local") +
                                  (info.param.overlap ? "Hooks" : "AfterBackward") + "Accum" +
                                  std::to_string(info.param.accum);
                         });

// The reference itself must be able to tell the two modes apart (else the tests above could not fail).
TEST(DistToy, GatherChangesTheLoss) {
  ToySpec g, l;
  g.gather = true;
  const auto a = run_toy_reference(g, 2), b = run_toy_reference(l, 2);
  EXPECT_GT(std::abs(a.losses[0] - b.losses[0]), 1e-3);
}

TEST(DistGroup, OneProcessHasNoGroup) {
  auto g = init_process_group(DistEnv{});
  EXPECT_FALSE(g->distributed());
  EXPECT_EQ(g->backend(), "none");
  EXPECT_EQ(g->all_reduce_mean(3.5), 3.5);
  g->barrier();
}

TEST(DistFailure, KilledRankMakesThePeerFail) {
  LaunchSpec ls;
  ls.exe = BT_DIST_WORKER;
  ls.args = {"die"};
  ls.extra_env = {{"BT_DDP_TIMEOUT", "5"}};
  ls.deadline_s = 40;
  auto rs = launch(ls);
  EXPECT_EQ(rs[1].signal, SIGKILL) << dump(rs);
  EXPECT_NE(rs[0].exit_code, 0) << dump(rs);
  EXPECT_NE(rs[0].output.find("error: rank 0/2: all_reduce failed"), std::string::npos) << dump(rs);
  EXPECT_LT(rs[0].seconds, 5 + 15.0) << dump(rs);  // within the timeout (+ start-up), not the test deadline
}

TEST(DistFailure, HungRankTimesOut) {
  LaunchSpec ls;
  ls.exe = BT_DIST_WORKER;
  ls.args = {"hang"};
  ls.extra_env = {{"BT_DDP_TIMEOUT", "2"}};
  ls.deadline_s = 40;
  auto rs = launch(ls);
  EXPECT_NE(rs[0].exit_code, 0) << dump(rs);
  EXPECT_NE(rs[0].output.find("error: rank 0/2: all_reduce failed"), std::string::npos) << dump(rs);
  EXPECT_LT(rs[0].seconds, 2 + 15.0) << dump(rs);
}

TEST(DistFailure, MissingRankZeroFailsRendezvous) {
  LaunchSpec ls;
  ls.exe = BT_DIST_WORKER;
  ls.args = {"hang"};
  ls.ranks = {1};
  ls.extra_env = {{"BT_DDP_TIMEOUT", "2"}};
  ls.deadline_s = 25;
  auto rs = launch(ls);
  EXPECT_EQ(rs[0].exit_code, 1) << dump(rs);
  EXPECT_NE(rs[0].output.find("error: rank 1/2: cannot reach the rendezvous store"), std::string::npos) << dump(rs);
}

TEST(DistTorchrun, AgentStoreRendezvous) {
  if (::access("/usr/bin/torchrun", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/torchrun";
  // torchrun passes the same arguments to every rank: the worker puts its RANK into "{rank}" itself.
  const std::string out = tmp_path("torchrun_{rank}.bin");
  // Debian's torchrun 1.13 on Python 3.11 crashes on its default --redirects 0 / --tee 0 (Std.from_str returns
  // None for 0): any non-zero value works around it.
  const std::string cmd = "OPENBLAS_NUM_THREADS=1 BT_DDP_TIMEOUT=20 timeout 90 /usr/bin/torchrun --nproc_per_node 2 "
                          "--master_port " + std::to_string(free_port()) + " --redirects 2 --tee 2 --no_python " +
                          BT_DIST_WORKER + " toy '" + out + "' 1 1 1";
  std::string log;
  ASSERT_EQ(run_command(cmd, &log), 0) << log;
  ToySpec spec;
  spec.gather = true;
  const ToyResult ref = run_toy_reference(spec, 2);
  for (int r = 0; r < 2; ++r) {
    std::string p = out;
    p.replace(p.find("{rank}"), 6, std::to_string(r));
    const ToyResult got = read_result(p);
    std::filesystem::remove(p);
    expect_close(got.final_params, ref.final_params, 1e-5, "final parameters");
  }
}

TEST(DistBridgeTower, GatheredContrastiveEqualsOneProcess) {
  if (!std::filesystem::exists(std::string(BT_FIXTURE_DIR) + "/model.safetensors")) GTEST_SKIP() << "no fixture";
  for (bool gather : {true, false}) {
    SCOPED_TRACE(gather ? "gather" : "local");
    const std::string out = tmp_path("bt_{rank}.bin");
    LaunchSpec ls;
    ls.exe = BT_DIST_WORKER;
    ls.args = {"bt", BT_FIXTURE_DIR, out, gather ? "1" : "0"};
    ls.deadline_s = 120;
    auto rs = launch(ls);
    for (const auto& r : rs) ASSERT_EQ(r.exit_code, 0) << dump(rs);
    const ToyResult ref = bt_reference(BT_FIXTURE_DIR, 2, gather);
    for (int r = 0; r < 2; ++r) {
      std::string p = out;
      p.replace(p.find("{rank}"), 6, std::to_string(r));
      const ToyResult got = read_result(p);
      std::filesystem::remove(p);
      expect_close(got.losses, ref.losses, 1e-5, "loss");
      expect_close(got.first_grads, ref.first_grads, 1e-4, "gradients");
    }
  }
}

}  // namespace
}  // namespace bt::dist::testing
