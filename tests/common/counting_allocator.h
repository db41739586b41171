// Test double: a HostAllocator over std::aligned_alloc that counts calls and remembers the live blocks, so a
// test can check that memory came from it, that nothing leaked, and that a steady state does not allocate.
// Thread-safe (buffers may be resized or destroyed on any thread).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>

#include "common/host_buffer.h"

namespace bt::test {

class CountingAllocator {
 public:
  CountingAllocator() : a_{&CountingAllocator::allocate, &CountingAllocator::release, this, "counting"} {}
  const HostAllocator* get() const { return &a_; }

  size_t allocations() const {
    std::lock_guard lock(mu_);
    return allocations_;
  }
  size_t releases() const {
    std::lock_guard lock(mu_);
    return releases_;
  }
  // Whether [p, p + n) lies inside one live block this allocator handed out.
  bool owns(const void* p, size_t n) const {
    std::lock_guard lock(mu_);
    const auto at = reinterpret_cast<uintptr_t>(p);
    auto it = live_.upper_bound(at);
    if (it == live_.begin()) return false;
    --it;
    return at >= it->first && at + n <= it->first + it->second;
  }

 private:
  static void* allocate(size_t bytes, void* ctx) {
    auto* self = static_cast<CountingAllocator*>(ctx);
    void* p = std::aligned_alloc(HostBuffer::kAlign, bytes);
    std::lock_guard lock(self->mu_);
    ++self->allocations_;
    if (p) self->live_[reinterpret_cast<uintptr_t>(p)] = bytes;
    return p;
  }
  static void release(void* p, void* ctx) {
    auto* self = static_cast<CountingAllocator*>(ctx);
    {
      std::lock_guard lock(self->mu_);
      ++self->releases_;
      self->live_.erase(reinterpret_cast<uintptr_t>(p));
    }
    std::free(p);
  }

  HostAllocator a_;
  mutable std::mutex mu_;
  size_t allocations_ = 0, releases_ = 0;
  std::map<uintptr_t, size_t> live_;  // address -> bytes
};

}  // namespace bt::test
