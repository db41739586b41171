// Local-file and pipe: byte streams (see byte_stream.h); HTTP lives in http_stream.cpp.
#include "data/byte_stream.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/file_gate.h"
#include "common/terminal.h"

extern char** environ;

namespace bt::data {

namespace {

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

class FileStream : public ByteStream {
 public:
  explicit FileStream(std::string path) : path_(std::move(path)), fd_(open_regular_file(path_)) {}
  ~FileStream() override { ::close(fd_); }
  size_t read(void* buf, size_t n) override {
    for (;;) {
      ssize_t r = ::read(fd_, buf, n);
      if (r >= 0) return size_t(r);
      if (errno != EINTR) fail(path_, ": read error (", std::strerror(errno), ")");
    }
  }
  const std::string& location() const override { return path_; }

 private:
  std::string path_;
  int fd_;
};

// The signals a pipe: command gets back at their defaults: the training blocks SIGTERM/SIGINT/SIGUSR1 in every
// thread but its signal thread and ignores SIGPIPE, and posix_spawn passes both on unless told otherwise (a child
// that inherits them cannot be stopped, and a stopped `cat` would print "write error: Broken pipe").
constexpr int kDefaultSignals[] = {SIGPIPE, SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGHUP, SIGQUIT, SIGALRM, SIGXFSZ};

// The command's stdout. A failure (nonzero exit, signal) reruns it and discards what was already delivered.
class PipeStream : public ByteStream {
 public:
  PipeStream(const UserCommand& c, const StreamOptions& o)
      : loc_(c.location()), cmd_(c.command()), opts_(o) {
    spawn();
  }
  ~PipeStream() override { stop(); }

  size_t read(void* buf, size_t n) override {
    for (;;) {
      size_t got = read_once(buf, n);
      if (got > 0) {
        offset_ += got;
        return got;
      }
      if (fd_ < 0 && quiet_.empty()) return 0;  // finished cleanly earlier
      std::string why = finish();
      if (why.empty()) return 0;
      if (past_deadline_ || retries_used_ >= opts_.retries)
        fail(loc_, ": ", why, retries_used_ ? str(" (after ", retries_used_, " retries)") : "");
      pause_before_retry(retries_used_++);
      spawn();
      discard(offset_);
    }
  }
  const std::string& location() const override { return loc_; }
  int reopened() const override { return retries_used_; }

 private:
  void spawn() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) fail(loc_, ": cannot make a pipe (", std::strerror(errno), ")");
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawnattr_init(&at);
    // Its own group (stopping kills the whole pipeline), no blocked signals, the stopping signals at default.
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&at, 0);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int sig : kDefaultSignals) sigaddset(&defaults, sig);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &defaults);
    const char* argv[] = {"/bin/sh", "-c", cmd_.c_str(), nullptr};
    int rc = posix_spawn(&pid_, "/bin/sh", &fa, &at, const_cast<char* const*>(argv), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      pid_ = -1;
      fail(loc_, ": cannot start /bin/sh (", std::strerror(rc), ")");
    }
    fd_ = fds[0];
  }
  // Milliseconds left before the deadline (waiting time counted by read_once).
  int64_t deadline_left_ms() const { return int64_t(opts_.deadline_s) * 1000 - waited_ms_; }
  size_t read_once(void* buf, size_t n) {
    if (fd_ < 0) return 0;
    // A command that goes quiet (a hung download) must not hang training: no byte for low_speed_time_s is a
    // failure, like HTTP's low-speed limit; one that drips bytes meets the deadline.
    const int64_t quiet_ms = int64_t(opts_.low_speed_time_s) * 1000;
    const int64_t wait_ms = std::max<int64_t>(0, std::min(quiet_ms, deadline_left_ms()));
    pollfd p{fd_, POLLIN, 0};
    const auto t0 = std::chrono::steady_clock::now();
    int rc;
    while ((rc = ::poll(&p, 1, int(wait_ms))) < 0 && errno == EINTR) {
    }
    waited_ms_ += std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    if (rc == 0) {
      past_deadline_ = deadline_left_ms() <= 0;
      quiet_ = past_deadline_ ? str("still running after the deadline of ", opts_.deadline_s, " s, at byte ", offset_,
                                    " (the command was stopped)")
                              : str("no output for ", opts_.low_speed_time_s, " s (the command was stopped)");
      stop();
      return 0;
    }
    for (;;) {
      ssize_t r = ::read(fd_, buf, n);
      if (r >= 0) return size_t(r);
      if (errno != EINTR) return 0;  // treated as the end; the exit status tells whether it failed
    }
  }
  // At the end of the output: waits for the command; "" when it exited 0, else why it failed.
  std::string finish() {
    if (!quiet_.empty()) return std::exchange(quiet_, std::string());
    ::close(fd_);
    fd_ = -1;
    // Its stdout is closed, so it is ending; one that lingers all the same is stopped.
    if (!exited(opts_.kill_grace_ms)) {
      stop();
      return "the command did not exit after closing its output (it was stopped)";
    }
    const int st = reap();
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return {};
    if (WIFEXITED(st)) return str("the command exited with status ", WEXITSTATUS(st));
    return str("the command was killed by signal ", WTERMSIG(st));
  }
  // Waits up to `ms` for the shell to end, without reaping it: until it is reaped its pid (the group's id) cannot
  // be reused, so signalling the group stays safe.
  bool exited(int ms) {
    for (int waited = 0;; waited += 10) {
      siginfo_t si{};
      const int r = ::waitid(P_PID, id_t(pid_), &si, WEXITED | WNOHANG | WNOWAIT);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 || si.si_pid == pid_) return true;
      if (waited >= ms) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  // The shell has ended: SIGKILL to what is left of its group (a pipeline's other commands), then its status.
  int reap() {
    ::kill(-pid_, SIGKILL);
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return st;
  }
  void discard(uint64_t n) {
    std::vector<char> tmp(1 << 16);
    while (n > 0) {
      size_t got = read_once(tmp.data(), size_t(std::min<uint64_t>(n, tmp.size())));
      if (got == 0) {
        std::string why = finish();
        fail(loc_, ": the rerun command ", why.empty() ? "ended" : why, " before the ", offset_,
             " bytes already read (its output changed?)");
      }
      n -= got;
    }
  }
  // SIGTERM to the group, SIGKILL after the grace period; never waits longer than that (plus a second).
  void stop() {
    if (pid_ > 0) ::kill(-pid_, SIGTERM);  // before closing: a writer is ended by the signal, not by EPIPE
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (pid_ <= 0) return;
    if (!exited(opts_.kill_grace_ms)) {
      ::kill(-pid_, SIGKILL);
      if (!exited(1000)) {  // stuck in the kernel: left to it (and to init once this process exits)
        pid_ = -1;
        return;
      }
    }
    reap();
  }
  void pause_before_retry(int k) {
    int ms = std::min(5000, opts_.retry_pause_ms << std::min(k, 10));
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }

  std::string loc_, cmd_;
  StreamOptions opts_;
  pid_t pid_ = -1;
  int fd_ = -1;
  uint64_t offset_ = 0;
  int retries_used_ = 0;
  int64_t waited_ms_ = 0;      // time read_once waited for output, over every run of the command
  std::string quiet_;          // read_once stopped a quiet or late command: why, for finish()
  bool past_deadline_ = false;  // ... and it was the deadline (no retry)
};

}  // namespace

bool is_streamed_location(const std::string& s) {
  return starts_with(s, "http://") || starts_with(s, "https://") || starts_with(s, "pipe:");
}

std::unique_ptr<ByteStream> open_pipe_stream(const UserCommand& command, const StreamOptions& opts) {
  if (command.command().empty())
    fail(command.location(), ": pipe: needs a command (pipe:curl -s URL, pipe:aws s3 cp s3://... -)");
  return std::make_unique<PipeStream>(command, opts);
}

std::unique_ptr<ByteStream> open_byte_stream(const std::string& location, const StreamOptions& opts) {
  if (is_command_location(location)) {
    // Only what the user typed runs (user_command.h); a command that came out of a file is refused here at the
    // latest, even where its reader did not refuse it first.
    const std::optional<UserCommand> c = find_user_command(location);
    if (!c)
      fail(clip_name(location, 120), ": a pipe: command runs only when you type it (a flag, or an args file you "
           "pass); this one was not typed (it came from a file or a file listing), so it is not run");
    return open_pipe_stream(*c, opts);
  }
  if (starts_with(location, "http://") || starts_with(location, "https://")) return open_http_stream(location, opts);
  return std::make_unique<FileStream>(location);
}

}  // namespace bt::data
