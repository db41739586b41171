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

// Which misses are worth storing. Storing a crop copies it into fresh memory (0.15-0.2 ms for 288 px on the
// 2-core VM, 7 % of a sample's time), so a crop is stored only when it can be read again: on a loader's first
// pass, when its image comes again later in that pass; from the second pass on always (a pass's images come
// back in the next one). Set up by start_pass() while no worker runs; admit() is then safe from any thread.
class CacheAdmission {
 public:
  // rows: the pass's order (positions start.. are produced); image_ids: per dataset row (rows sharing an image
  // share an id), as image_ids_of() gives them.
  void start_pass(const std::vector<size_t>& rows, size_t start, const std::vector<uint32_t>& image_ids);
  // Whether the crop of `row`, produced for position `pos` of the pass, should be stored.
  bool admit(size_t pos, size_t row) const { return passes_ > 1 || last_pos_[(*ids_)[row]] > pos; }

 private:
  size_t passes_ = 0;
  const std::vector<uint32_t>* ids_ = nullptr;
  std::vector<size_t> last_pos_;  // first pass: per image id, its last position in the pass
};

}  // namespace bt::loader
