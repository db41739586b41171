// A growable, 64-byte aligned, uninitialised byte buffer whose memory comes from a caller-chosen
// HostAllocator, so a consumer can have data written straight into memory it needs (e.g. page-locked memory
// from cudaHostAlloc, which a device copy reads asynchronously with no staging copy).
//
// Contract:
//  - Without an allocator (or with nullptr) memory comes from std::aligned_alloc / std::free.
//  - An allocator returns 64-byte aligned memory of at least `bytes`, or nullptr (then resize() throws
//    bt::Error naming it); it must outlive every buffer that uses it, and is called from the thread that
//    resizes or destroys the buffer.
//  - resize() never shrinks and never zero-fills; growing keeps the first size() bytes. A growth allocates
//    grown_capacity(n) (n + n/4 rounded up to 64 KiB), so a stream of slightly varying sizes stops allocating
//    after the first few. allocations() counts the allocator calls made, so a caller can prove that steady-state
//    steps do not allocate.
//  - Move-only; moving carries the memory and its allocator along.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/error.h"

namespace bt {

struct HostAllocator {
  void* (*allocate)(size_t bytes, void* ctx) = nullptr;  // 64-byte aligned, or nullptr on failure
  void (*release)(void* p, void* ctx) = nullptr;
  void* ctx = nullptr;
  const char* name = "";  // for error messages, e.g. "cudaHostAlloc"
};

class HostBuffer {
 public:
  static constexpr size_t kAlign = 64;
  static constexpr size_t kGranule = size_t{64} << 10;

  // The one growth policy: 25% headroom, whole 64 KiB granules (a multiple of kAlign, as aligned_alloc needs).
  static constexpr size_t grown_capacity(size_t need) {
    const size_t want = need + need / 4;
    return (want + kGranule - 1) / kGranule * kGranule;
  }

  static const HostAllocator& default_allocator() {
    static const HostAllocator a{[](size_t bytes, void*) { return std::aligned_alloc(kAlign, bytes); },
                                 [](void* p, void*) { std::free(p); }, nullptr, "aligned_alloc"};
    return a;
  }

  HostBuffer() = default;
  explicit HostBuffer(const HostAllocator* a) { set_allocator(a); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  HostBuffer(HostBuffer&& o) noexcept { swap(o); }
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    if (this != &o) {
      HostBuffer(std::move(o)).swap(*this);
    }
    return *this;
  }
  ~HostBuffer() { free_memory(); }

  // Memory from `a` (nullptr = the default) from now on; memory already held is released (contents dropped).
  void set_allocator(const HostAllocator* a) {
    free_memory();
    size_ = 0;
    alloc_ = a ? a : &default_allocator();
  }
  const HostAllocator& allocator() const { return *alloc_; }

  void resize(size_t n) {
    if (n > capacity_) grow(n);
    size_ = n;
  }
  void clear() { size_ = 0; }
  void swap(HostBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
    std::swap(allocations_, o.allocations_);
    std::swap(alloc_, o.alloc_);
  }

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  size_t allocations() const { return allocations_; }

 private:
  void grow(size_t n) {
    if (n > SIZE_MAX / 2) fail("host buffer: ", n, " bytes requested (", alloc_->name, ")");
    const size_t cap = grown_capacity(n);
    void* p = alloc_->allocate(cap, alloc_->ctx);
    if (!p) fail("host buffer: allocator '", alloc_->name, "' could not allocate ", cap, " bytes");
    if (reinterpret_cast<uintptr_t>(p) % kAlign != 0) {
      alloc_->release(p, alloc_->ctx);
      fail("host buffer: allocator '", alloc_->name, "' returned memory not aligned to ", kAlign, " bytes");
    }
    ++allocations_;
    if (size_) std::memcpy(p, data_, size_);
    free_memory();
    data_ = static_cast<uint8_t*>(p);
    capacity_ = cap;
  }
  void free_memory() {
    if (data_) alloc_->release(data_, alloc_->ctx);
    data_ = nullptr;
    capacity_ = 0;
  }

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  size_t allocations_ = 0;
  const HostAllocator* alloc_ = &default_allocator();
};

}  // namespace bt
