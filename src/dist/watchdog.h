// Last line of defence against a collective that never returns (c10d's own timeout should fire first): a
// thread that ends the process with exit code 3 and one clear stderr line when an operation between begin()
// and end() has lasted longer than limit_s. Torch-free; begin/end are cheap (one mutex, no allocation beyond a
// map node) and may be called from any thread.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace bt::dist {

class Watchdog {
 public:
  Watchdog(std::string who, double limit_s, double poll_s = 0.25);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  uint64_t begin(const char* what);  // `what` must outlive the operation (a string literal)
  void end(uint64_t id);

 private:
  void loop();
  using Clock = std::chrono::steady_clock;
  struct Op {
    Clock::time_point start;
    const char* what;
  };
  std::string who_;
  double limit_s_, poll_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Op> ops_;
  uint64_t next_id_ = 1;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace bt::dist
