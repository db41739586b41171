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
#include <vector>

#include "common/error.h"
#include "common/file_gate.h"

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

// The command's stdout. A failure (nonzero exit, signal) reruns it and discards what was already delivered.
class PipeStream : public ByteStream {
 public:
  PipeStream(std::string location, const StreamOptions& o) : loc_(std::move(location)), opts_(o) {
    cmd_ = loc_.substr(5);
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
      if (fd_ < 0 && !timed_out_) return 0;  // finished cleanly earlier
      std::string why = finish();
      if (why.empty()) return 0;
      if (retries_used_ >= opts_.retries) fail(loc_, ": ", why, retries_used_ ? str(" (after ", retries_used_, " retries)") : "");
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
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);  // its own group: closing early kills the whole pipeline
    posix_spawnattr_setpgroup(&at, 0);
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
  size_t read_once(void* buf, size_t n) {
    if (fd_ < 0) return 0;
    // A command that goes quiet (a hung download) must not hang training: no byte for low_speed_time_s is a
    // failure, like HTTP's low-speed limit.
    pollfd p{fd_, POLLIN, 0};
    int rc;
    while ((rc = ::poll(&p, 1, opts_.low_speed_time_s * 1000)) < 0 && errno == EINTR) {
    }
    if (rc == 0) {
      stop();
      timed_out_ = true;
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
    if (timed_out_) {
      timed_out_ = false;
      return str("no output for ", opts_.low_speed_time_s, " s (the command was stopped)");
    }
    ::close(fd_);
    fd_ = -1;
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return {};
    if (WIFEXITED(st)) return str("the command exited with status ", WEXITSTATUS(st));
    return str("the command was killed by signal ", WTERMSIG(st));
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
  void stop() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (pid_ > 0) {
      ::kill(-pid_, SIGTERM);
      int st;
      while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
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
  bool timed_out_ = false;  // read_once stopped a quiet command; finish() reports it
};

}  // namespace

bool is_streamed_location(const std::string& s) {
  return starts_with(s, "http://") || starts_with(s, "https://") || starts_with(s, "pipe:");
}

std::unique_ptr<ByteStream> open_pipe_stream(const std::string& location, const StreamOptions& opts) {
  if (location.size() <= 5) fail(location, ": pipe: needs a command (pipe:curl -s URL, pipe:aws s3 cp s3://... -)");
  return std::make_unique<PipeStream>(location, opts);
}

std::unique_ptr<ByteStream> open_byte_stream(const std::string& location, const StreamOptions& opts) {
  if (starts_with(location, "pipe:")) return open_pipe_stream(location, opts);
  if (starts_with(location, "http://") || starts_with(location, "https://")) return open_http_stream(location, opts);
  return std::make_unique<FileStream>(location);
}

}  // namespace bt::data
