// A growable, 64-byte aligned, uninitialised buffer of trivially copyable T. Batches are written into these
// and reused across steps, so resize() never shrinks the allocation and never zero-fills.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace bt {

template <class T>
class AlignedBuffer {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  static constexpr std::size_t kAlign = 64;
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t n) { resize(n); }
  AlignedBuffer(const AlignedBuffer& o) { *this = o; }
  AlignedBuffer& operator=(const AlignedBuffer& o) {
    if (this != &o) {
      resize(o.size_);
      if (size_) std::memcpy(data_, o.data_, size_ * sizeof(T));
    }
    return *this;
  }
  AlignedBuffer(AlignedBuffer&& o) noexcept { swap(o); }
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    swap(o);
    return *this;
  }
  ~AlignedBuffer() { std::free(data_); }

  void resize(std::size_t n) {
    if (n > capacity_) {
      std::size_t bytes = (n * sizeof(T) + kAlign - 1) / kAlign * kAlign;
      void* p = std::aligned_alloc(kAlign, bytes);
      if (!p) throw std::bad_alloc();
      if (size_) std::memcpy(p, data_, size_ * sizeof(T));
      std::free(data_);
      data_ = static_cast<T*>(p);
      capacity_ = n;
    }
    size_ = n;
  }
  void clear() { size_ = 0; }
  std::size_t capacity() const { return capacity_; }
  // Gives the memory back when it holds more than max_bytes (a buffer grown for one huge input).
  void release_above(std::size_t max_bytes) {
    if (capacity_ * sizeof(T) > max_bytes) AlignedBuffer().swap(*this);
  }
  void swap(AlignedBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace bt
