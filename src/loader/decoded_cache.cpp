#include "loader/decoded_cache.h"

#include <algorithm>
#include <cstring>

namespace bt::loader {

bool DecodedCache::get(const std::string& key, uint8_t* out, size_t size) {
  Value v;
  {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end() || it->second->value->size() != size) {
      ++misses_;
      return false;
    }
    lru_.splice(lru_.begin(), lru_, it->second);
    v = it->second->value;
    ++hits_;
  }
  // The copy happens outside the lock; the shared_ptr keeps the entry alive if it is evicted meanwhile.
  std::memcpy(out, v->data(), size);
  return true;
}

void DecodedCache::put(const std::string& key, const uint8_t* data, size_t size) {
  if (size > capacity_) return;
  auto v = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  std::lock_guard lock(mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    bytes_ -= it->second->value->size();
    lru_.erase(it->second);
    index_.erase(it);
  }
  while (!lru_.empty() && bytes_ + size > capacity_) {
    bytes_ -= lru_.back().value->size();
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
  lru_.push_front({key, std::move(v)});
  index_.emplace(key, lru_.begin());
  bytes_ += size;
}

void CacheAdmission::start_pass(const std::vector<size_t>& rows, size_t start, const std::vector<uint32_t>& image_ids) {
  ids_ = &image_ids;
  if (++passes_ > 1) {
    last_pos_ = {};
    return;
  }
  uint32_t max_id = 0;
  for (uint32_t id : image_ids) max_id = std::max(max_id, id);
  last_pos_.assign(size_t{max_id} + 1, 0);
  for (size_t pos = start; pos < rows.size(); ++pos) last_pos_[image_ids[rows[pos]]] = pos;
}

size_t DecodedCache::hits() const {
  std::lock_guard lock(mu_);
  return hits_;
}
size_t DecodedCache::misses() const {
  std::lock_guard lock(mu_);
  return misses_;
}
size_t DecodedCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}
size_t DecodedCache::entries() const {
  std::lock_guard lock(mu_);
  return lru_.size();
}

}  // namespace bt::loader
