#include "loader/stream_source.h"

#include "common/error.h"

namespace bt::loader {

StreamSource::StreamSource(const std::vector<std::string>& shards, const data::ShardOptions& shard_opts,
                           const SamplerOptions& sampling, uint64_t epoch, StreamOptions opts)
    : opt_(opts) {
  if (opt_.queue_capacity < 1) opt_.queue_capacity = 1;
  if (shards.empty()) fail("no tar shards to read");
  SamplerOptions so = sampling;
  so.dedupe_images_in_batch = false;
  if (static_cast<size_t>(so.world_size) > shards.size())
    fail("world_size ", so.world_size, " is larger than the number of tar shards (", shards.size(),
         "): every rank needs at least one shard");
  std::vector<std::string> mine;
  for (size_t i : Sampler(shards.size(), so).epoch_rows(epoch)) mine.push_back(shards[i]);
  uint64_t seed = hash_combine(hash_combine(sampling.seed, epoch), 0x5354524541ULL + sampling.rank);
  thread_ = std::thread([this, mine = std::move(mine), shard_opts, seed, shuffle = sampling.shuffle]() mutable {
    if (!shuffle) opt_.shuffle_buffer = 0;
    run(std::move(mine), shard_opts, seed);
  });
}

StreamSource::~StreamSource() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void StreamSource::push(data::TarSample&& s) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return stop_ || queue_.size() < opt_.queue_capacity; });
  if (stop_) return;
  queue_.push_back(std::move(s));
  cv_.notify_all();
}

void StreamSource::run(std::vector<std::string> shards, data::ShardOptions shard_opts, uint64_t seed) {
  std::string error;
  try {
    data::ShardStream stream(std::move(shards), shard_opts);
    std::vector<data::TarSample> buffer;
    uint64_t draw = 0;
    size_t skip = opt_.skip;
    auto emit = [&](data::TarSample&& s) {
      if (skip > 0) --skip;
      else push(std::move(s));
    };
    auto stopping = [&] {
      std::lock_guard lock(mu_);
      return stop_;
    };
    data::TarSample s;
    while (!stopping() && stream.next(s)) {
      if (opt_.shuffle_buffer <= 1) {
        emit(std::move(s));
      } else if (buffer.size() < opt_.shuffle_buffer) {
        buffer.push_back(std::move(s));
      } else {  // emit a random buffered sample, keep the new one in its place
        size_t i = static_cast<size_t>(mix64(seed + draw++) % buffer.size());
        std::swap(buffer[i], s);
        emit(std::move(s));
      }
      s = data::TarSample{};
    }
    while (!buffer.empty() && !stopping()) {
      size_t i = static_cast<size_t>(mix64(seed + draw++) % buffer.size());
      std::swap(buffer[i], buffer.back());
      emit(std::move(buffer.back()));
      buffer.pop_back();
    }
    std::lock_guard lock(mu_);
    bad_ = stream.bad();
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::lock_guard lock(mu_);
  error_ = error;
  done_ = true;
  cv_.notify_all();
}

bool StreamSource::pop(data::TarSample& out) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return stop_ || done_ || !queue_.empty(); });
  if (!queue_.empty()) {
    out = std::move(queue_.front());
    queue_.pop_front();
    cv_.notify_all();
    return true;
  }
  if (!error_.empty()) throw Error(error_);
  return false;
}

data::BadRows StreamSource::bad() const {
  std::lock_guard lock(mu_);
  return bad_;
}

}  // namespace bt::loader
