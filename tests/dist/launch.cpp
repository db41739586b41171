#include "launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace bt::dist::testing {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("bind/getsockname failed");
  }
  const int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

namespace {

std::string read_file(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string replace_rank(std::string s, int rank) {
  const std::string key = "{rank}";
  for (size_t at; (at = s.find(key)) != std::string::npos;) s.replace(at, key.size(), std::to_string(rank));
  return s;
}

}  // namespace

std::vector<RankResult> launch(const LaunchSpec& spec) {
  using Clock = std::chrono::steady_clock;
  const int port = free_port();
  std::vector<int> ranks = spec.ranks;
  if (ranks.empty())
    for (int r = 0; r < spec.world_size; ++r) ranks.push_back(r);
  std::map<std::string, std::string> base;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) base[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const char* k : {"TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_RESTART_COUNT", "GLOO_SOCKET_IFNAME"})
    base.erase(k);
  base["OPENBLAS_NUM_THREADS"] = "1";
  for (const auto& [k, v] : spec.extra_env) base[k] = v;

  std::vector<RankResult> out(ranks.size());
  std::vector<pid_t> pids(ranks.size(), -1);
  std::vector<std::string> logs(ranks.size());
  const auto t0 = Clock::now();
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    auto env = base;
    env["RANK"] = std::to_string(r);
    env["LOCAL_RANK"] = std::to_string(r);
    env["WORLD_SIZE"] = std::to_string(spec.world_size);
    env["LOCAL_WORLD_SIZE"] = std::to_string(spec.world_size);
    env["MASTER_ADDR"] = "127.0.0.1";
    env["MASTER_PORT"] = std::to_string(port);
    std::vector<std::string> envs, args{spec.exe};
    for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
    for (const auto& a : spec.args) args.push_back(replace_rank(a, r));
    char tmpl[] = "/tmp/bt_dist_rank_XXXXXX";
    const int fd = ::mkstemp(tmpl);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    logs[i] = tmpl;
    // Everything the child needs is built before fork: between fork and exec only async-signal-safe calls.
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : envs) envp.push_back(e.data());
    envp.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(fd);
    pids[i] = pid;
  }
  size_t running = ranks.size();
  while (running > 0) {
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (pids[i] < 0) continue;
      int status = 0;
      if (::waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        out[i].seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        if (WIFEXITED(status)) out[i].exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) out[i].signal = WTERMSIG(status);
        pids[i] = -1;
        --running;
      }
    }
    if (running == 0) break;
    if (std::chrono::duration<double>(Clock::now() - t0).count() > spec.deadline_s) {
      for (size_t i = 0; i < ranks.size(); ++i)
        if (pids[i] > 0) ::kill(pids[i], SIGKILL);
      for (size_t i = 0; i < ranks.size(); ++i) {
        if (pids[i] < 0) continue;
        int status = 0;
        ::waitpid(pids[i], &status, 0);
        out[i].seconds = spec.deadline_s;
        out[i].signal = SIGKILL;
        out[i].output = "[killed at the test deadline]\n";
        pids[i] = -1;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    out[i].output += read_file(logs[i]);
    ::unlink(logs[i].c_str());
  }
  return out;
}

int run_command(const std::string& cmd, std::string* output) {
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) output->append(buf, n);
  const int st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace bt::dist::testing
