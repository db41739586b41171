#include "dist/watchdog.h"

#include <cstdio>
#include <cstdlib>

namespace bt::dist {

Watchdog::Watchdog(std::string who, double limit_s, double poll_s)
    : who_(std::move(who)), limit_s_(limit_s), poll_s_(poll_s), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

uint64_t Watchdog::begin(const char* what) {
  std::lock_guard<std::mutex> l(mu_);
  const uint64_t id = next_id_++;
  ops_.emplace(id, Op{Clock::now(), what});
  return id;
}

void Watchdog::end(uint64_t id) {
  std::lock_guard<std::mutex> l(mu_);
  ops_.erase(id);
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> l(mu_);
  const auto poll = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(poll_s_));
  while (!stop_) {
    cv_.wait_for(l, poll, [this] { return stop_; });
    if (stop_) break;
    if (ops_.empty()) continue;
    const Op& oldest = ops_.begin()->second;  // ids grow with time: the first entry started first
    const double age = std::chrono::duration<double>(Clock::now() - oldest.start).count();
    if (age > limit_s_) {
      std::fprintf(stderr,
                   "error: %s: %s made no progress for %.0f s; another rank probably died or hung (see its "
                   "output) -- aborting\n",
                   who_.c_str(), oldest.what, age);
      std::fflush(stderr);
      std::_Exit(3);
    }
  }
}

}  // namespace bt::dist
