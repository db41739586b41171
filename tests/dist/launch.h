// Test helper: runs N copies of a worker executable as ranks 0..N-1 of one job on a free loopback port
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT), each with stderr and
// stdout captured to a file, and waits for all of them up to a deadline (then kills the rest with SIGKILL).
#pragma once
#include <string>
#include <vector>

namespace bt::dist::testing {

struct RankResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  double seconds = 0;  // from launch to exit
  std::string output;  // stdout + stderr
};

struct LaunchSpec {
  std::string exe;
  std::vector<std::string> args;  // after exe; "{rank}" is replaced by the rank
  int world_size = 2;
  std::vector<int> ranks;         // which ranks to start (default: all)
  double deadline_s = 60;
  std::vector<std::pair<std::string, std::string>> extra_env;
};

int free_port();
std::vector<RankResult> launch(const LaunchSpec& spec);
// Runs a shell command (for torchrun), output captured; returns the exit status.
int run_command(const std::string& cmd, std::string* output);

}  // namespace bt::dist::testing
