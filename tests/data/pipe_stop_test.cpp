// Issue 53, item 2: every pipe: child can be stopped. The test thread blocks SIGTERM/SIGINT/SIGUSR1 and ignores
// SIGPIPE, as a training process does; the child must get an empty mask and default dispositions, its whole group is
// stopped (SIGTERM, then SIGKILL after the grace period) in bounded time even when it ignores SIGTERM, a silent one
// is stopped by the no-output rule, and a stopped writer prints no "Broken pipe".
#include <gtest/gtest.h>
#include <signal.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../common/error_of.h"
#include "../common/user_typed.h"
#include "data/byte_stream.h"
#include "test_util.h"

using namespace bt::data;
using bt::data::testing::TempDir;
using bt::test::error_of;
using bt::test::typed;
using Clock = std::chrono::steady_clock;

namespace {

namespace fs = std::filesystem;

// The training's signal setup (train/stop_signal.h blocks these in every thread but its own; SIGPIPE ignored).
class PipeStop : public ::testing::Test {
 protected:
  void SetUp() override {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : {SIGTERM, SIGINT, SIGUSR1}) sigaddset(&s, sig);
    pthread_sigmask(SIG_BLOCK, &s, &old_mask_);
    old_pipe_ = ::signal(SIGPIPE, SIG_IGN);
    opts_.kill_grace_ms = 300;
    opts_.retries = 0;
  }
  void TearDown() override {
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    ::signal(SIGPIPE, old_pipe_);
  }
  std::string read_all(const std::string& loc) {
    auto s = open_byte_stream(typed(loc), opts_);
    std::string out;
    char buf[4096];
    for (size_t n; (n = s->read(buf, sizeof buf)) > 0;) out.append(buf, n);
    return out;
  }
  // The command's process group id, which it wrote to `file` (its shell's $$).
  static pid_t group_of(const std::string& file) {
    for (int i = 0; i < 200 && !fs::exists(file); ++i) usleep(10000);
    pid_t pid = 0;
    std::ifstream(file) >> pid;
    return pid;
  }
  // Whether a process of group g still runs (zombies waiting for init to reap them do not count).
  static bool group_alive(pid_t g) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
      if (!std::isdigit(static_cast<unsigned char>(e.path().filename().string()[0]))) continue;
      std::ifstream in(e.path() / "stat");
      std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const size_t paren = stat.rfind(')');
      if (paren == std::string::npos) continue;
      std::istringstream rest(stat.substr(paren + 2));
      char state = 0;
      long ppid = 0, pgrp = 0;
      rest >> state >> ppid >> pgrp;
      if (pgrp == g && state != 'Z' && state != 'X') return true;
    }
    return false;
  }

  TempDir dir_;
  StreamOptions opts_;
  sigset_t old_mask_;
  void (*old_pipe_)(int) = nullptr;
};

TEST_F(PipeStop, TheChildStartsWithNoBlockedOrIgnoredStopSignals) {
  const std::string status = read_all("pipe:grep -E '^Sig(Blk|Ign):' /proc/self/status");
  std::istringstream in(status);
  std::string key, hex;
  int lines = 0;
  while (in >> key >> hex) {
    const unsigned long long bits = std::stoull(hex, nullptr, 16);
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGUSR1})
      EXPECT_EQ(bits & (1ULL << (sig - 1)), 0u) << key << " " << hex << " holds signal " << sig;
    ++lines;
  }
  EXPECT_EQ(lines, 2) << status;
}

TEST_F(PipeStop, AChildThatIgnoresSigtermIsKilledWithItsGroupInBoundedTime) {
  const std::string pid_file = dir_ / "pid";
  auto s = open_byte_stream(typed("pipe:echo $$ > " + pid_file + "; trap '' TERM; (trap '' TERM; sleep 60) & "
                                  "head -c 100000 /dev/zero; sleep 60"), opts_);
  char buf[1024];
  ASSERT_GT(s->read(buf, sizeof buf), 0u);
  const pid_t g = group_of(pid_file);
  ASSERT_TRUE(group_alive(g));
  const auto t0 = Clock::now();
  s.reset();  // closing early: SIGTERM (ignored), SIGKILL 300 ms later, the background sleep included
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(3));
  EXPECT_FALSE(group_alive(g));
}

TEST_F(PipeStop, ASilentCommandThatIgnoresSigtermMeetsTheNoOutputRule) {
  opts_.low_speed_time_s = 1;
  const std::string pid_file = dir_ / "pid";
  const std::string cmd = "pipe:echo $$ > " + pid_file + "; trap '' TERM; sleep 60";
  auto s = open_byte_stream(typed(cmd), opts_);
  char c;
  const auto t0 = Clock::now();
  const std::string e = error_of([&] { s->read(&c, 1); });
  EXPECT_EQ(e, cmd + ": no output for 1 s (the command was stopped)");
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(4));
  EXPECT_FALSE(group_alive(group_of(pid_file)));
}

TEST_F(PipeStop, AStoppedWriterPrintsNoBrokenPipe) {
  // The writer ignores SIGTERM, so it ends by SIGPIPE when the reader goes (default, as in a shell): quietly.
  const std::string err = dir_ / "stderr";
  auto s = open_byte_stream(typed("pipe:trap '' TERM; cat /dev/zero 2> " + err), opts_);
  char buf[4096];
  ASSERT_GT(s->read(buf, sizeof buf), 0u);
  s.reset();
  std::ifstream in(err);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(text, "");
}

TEST_F(PipeStop, ACommandThatDripsBytesMeetsTheDeadline) {
  // Two bytes a second never trips the no-output rule; the deadline (time spent waiting for it, in all) does.
  opts_.low_speed_time_s = 5;
  opts_.deadline_s = 1;
  const std::string cmd = "pipe:while :; do printf ab; sleep 1; done";
  const auto t0 = Clock::now();
  const std::string e = error_of([&] { read_all(cmd); });
  EXPECT_EQ(e.rfind(cmd + ": still running after the deadline of 1 s, at byte ", 0), 0u) << e;
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(4));
}

}  // namespace
