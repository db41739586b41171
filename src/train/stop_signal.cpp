#include "train/stop_signal.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <thread>

namespace bt::train {
namespace {

std::atomic<int> g_received{0};
std::atomic<bool> g_armed{false};
std::atomic<int64_t> g_first_ns{0};

int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// The default action of `signo`, as if there were no handling (async-signal-safe).
void die_by(int signo) {
  std::signal(signo, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, signo);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  pthread_kill(pthread_self(), signo);
}

// Before the step loop: stop at once. Then the first stop signal is recorded, those within kSameRequestSeconds are
// the same request, and a later one ends the process at once.
void on_stop_signal(int signo) {
  if (!g_armed.load()) {
    static const char line[] = "stopped by a signal before training began: nothing to save\n";
    (void)!write(STDERR_FILENO, line, sizeof line - 1);
    die_by(signo);
    return;
  }
  int expected = 0;
  if (g_received.compare_exchange_strong(expected, signo)) {
    g_first_ns.store(now_ns());
    return;
  }
  if (now_ns() - g_first_ns.load() < int64_t(kSameRequestSeconds * 1e9)) return;
  die_by(signo);
}

// The stop signals this process handles: SIGINT only where it was not ignored from the start (a background job of a
// shell without job control: Ctrl-C at that terminal is not meant for it).
sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  struct sigaction old;
  if (sigaction(SIGINT, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

// The signals are blocked in the calling thread (and so in every thread it starts later) and taken by one waiting
// thread of their own: a signal handler that interrupted the training step's compute corrupted the heap (1 run in
// 4 aborted in libdnnl's sgemm, "corrupted size vs. prev_size", right after a SIGTERM). The handler stays installed
// for any thread started before (there should be none), so a stop signal never takes the default action first.
void install_stop_signals() {
  static_assert(std::atomic<int>::is_always_lock_free && std::atomic<int64_t>::is_always_lock_free,
                "the flags are set inside a signal handler");
  g_received.store(0);
  g_armed.store(false);
  static bool installed = false;
  if (installed) return;
  installed = true;
  const sigset_t set = stop_set();
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int signo : {SIGTERM, SIGINT, SIGUSR1})
    if (sigismember(&set, signo)) sigaction(signo, &sa, nullptr);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    for (;;) {
      int signo = 0;
      if (sigwait(&set, &signo) == 0) on_stop_signal(signo);
    }
  }).detach();
}

void arm_stop_signals() { g_armed.store(true); }

int stop_signal_received() { return g_received.load(); }

std::string signal_name(int signo) {
  switch (signo) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    default: return "signal " + std::to_string(signo);
  }
}

}  // namespace bt::train
