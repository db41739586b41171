// A bounded, thread-safe LRU of transformed uint8 crops. Deterministic (eval) transforms make an image that
// repeats across rows free after its first use; the key is the image key plus every transform parameter
// that changes the pixels. Random (train) transforms must not use it: the loader disables it for them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace bt::loader {

class DecodedCache {
 public:
  explicit DecodedCache(size_t capacity_bytes) : capacity_(capacity_bytes) {}

  // Copies the entry into out (size bytes) and returns true on a hit.
  bool get(const std::string& key, uint8_t* out, size_t size);
  // Inserts (or refreshes) an entry, evicting least recently used ones to stay within capacity. Entries
  // larger than the whole capacity are not stored.
  void put(const std::string& key, const uint8_t* data, size_t size);

  size_t hits() const;
  size_t misses() const;
  size_t bytes() const;
  size_t entries() const;
  size_t capacity() const { return capacity_; }

 private:
  using Value = std::shared_ptr<const std::vector<uint8_t>>;
  struct Entry {
    std::string key;
    Value value;
  };
  mutable std::mutex mu_;
  size_t capacity_;
  size_t bytes_ = 0;
  size_t hits_ = 0, misses_ = 0;
  std::list<Entry> lru_;  // front = most recently used
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace bt::loader
