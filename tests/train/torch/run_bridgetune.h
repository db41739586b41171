// Runs the built `bridgetune` executable from a test: stdout and stderr go to a log file, and the distributed
// variables of the test's own environment are cleared; rank >= 0 sets RANK/WORLD_SIZE/MASTER_* as torchrun
// would, for rank `rank` of a `world`-process job on loopback port `port` (and LOCAL_RANK too with `launched`:
// a rank of torchrun's, which dies with its launcher).
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace bt::test {

inline pid_t spawn_bridgetune(const std::vector<std::string>& args, const std::filesystem::path& log, int rank = -1,
                              int world = 0, int port = 0, bool launched = false) {
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::fopen(log.c_str(), "w");
    dup2(fileno(f), 1);
    dup2(fileno(f), 2);
    std::string exe = BT_BRIDGETUNE_EXE;
    std::vector<char*> argv{exe.data()};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    for (const char* v : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                          "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_RESTART_COUNT"})
      unsetenv(v);
    if (rank >= 0) {
      setenv("RANK", std::to_string(rank).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      if (launched) setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
    }
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The child's exit code, or 128 + signal when it was killed (as a shell reports it).
inline int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace bt::test
