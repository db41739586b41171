// Round-robin over K open streamed shards, in a seeded shard order per epoch (see stream_order.h).
#include "data/stream_order.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

#include "common/error.h"
#include "common/json.h"

namespace bt::data {

namespace {

uint64_t mix(uint64_t x) {  // splitmix64's finaliser: the shard permutation's randomness
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::string StreamCursor::to_json() const {
  nlohmann::json j = {{"epoch", epoch}, {"next_shard", next_shard}, {"turn", turn}, {"samples", samples}};
  j["slots"] = nlohmann::json::array();
  for (const auto& s : slots) j["slots"].push_back({s.shard, s.taken});
  return j.dump();
}

StreamCursor StreamCursor::from_json(const std::string& text) {
  auto j = try_parse_json(text);
  StreamCursor c;
  try {
    c.epoch = j.at("epoch").get<uint64_t>();
    c.next_shard = j.at("next_shard").get<size_t>();
    c.turn = j.at("turn").get<size_t>();
    c.samples = j.at("samples").get<uint64_t>();
    for (const auto& s : j.at("slots")) c.slots.push_back({s.at(0).get<int64_t>(), s.at(1).get<uint64_t>()});
  } catch (const std::exception&) {
    fail("the streamed-shard position in the checkpoint is malformed (expected epoch, next_shard, turn, samples, slots)");
  }
  return c;
}

std::vector<size_t> StreamOrder::epoch_shards(size_t n, const StreamOrderOptions& o, uint64_t epoch) {
  std::vector<size_t> perm(n);
  std::iota(perm.begin(), perm.end(), size_t(0));
  uint64_t state = mix(mix(o.seed) ^ (epoch + 0x5851f42d4c957f2dULL));
  for (size_t i = n; i > 1; --i) std::swap(perm[i - 1], perm[(state = mix(state)) % i]);  // Fisher-Yates
  std::vector<size_t> mine;
  for (size_t p = size_t(o.rank); p < n; p += size_t(o.world_size)) mine.push_back(perm[p]);
  return mine;
}

StreamOrder::StreamOrder(std::vector<std::string> shards, ShardOptions shard_opts, StreamOrderOptions opts,
                         StreamCursor start)
    : shards_(std::move(shards)), shard_opts_(std::move(shard_opts)), opts_(opts), cur_(std::move(start)) {
  if (opts_.world_size < 1 || opts_.rank < 0 || opts_.rank >= opts_.world_size || opts_.open_shards < 1)
    fail("streamed shards: bad rank/world_size/open_shards");
  if (shards_.size() < size_t(opts_.world_size))
    fail(shards_.empty() ? std::string("streamed shards") : shards_[0], ": ", shards_.size(),
         " shard(s) for ", opts_.world_size, " ranks; each rank reads whole shards, so give at least one per rank");
  const size_t k = size_t(opts_.open_shards);
  order_ = epoch_shards(shards_.size(), opts_, cur_.epoch);
  if (cur_.slots.empty()) cur_.slots.resize(k);
  if (cur_.slots.size() != k || cur_.turn >= k || cur_.next_shard > order_.size())
    fail("the streamed-shard position in the checkpoint does not fit ", k, " open shards over ", shards_.size(),
         " shards (resume with the same shards and settings)");
  readers_.resize(k);
  epoch_samples_ = cur_.samples;  // a resumed epoch has had samples (the all-bad check looks at whole epochs)
  for (size_t i = 0; i < k; ++i)
    if (cur_.slots[i].shard >= 0) {
      if (size_t(cur_.slots[i].shard) >= order_.size()) fail("the streamed-shard position in the checkpoint is out of range");
      open_slot(i, cur_.slots[i].taken);
    }
}

StreamOrder::~StreamOrder() = default;

void StreamOrder::open_slot(size_t i, uint64_t skip) {
  readers_[i] = ShardReader::open_location(shards_[order_[size_t(cur_.slots[i].shard)]], shard_opts_);
  TarSample t;
  for (uint64_t s = 0; s < skip; ++s)
    if (!readers_[i]->next(t)) break;  // the shard is shorter now: the slot ends at its next turn
}

// Gives slot i the order's next shard; false when the epoch has none left.
bool StreamOrder::refill(size_t i) {
  if (readers_[i]) bad_.merge(readers_[i]->bad());
  readers_[i].reset();
  cur_.slots[i] = {};
  if (cur_.next_shard >= order_.size()) return false;
  cur_.slots[i] = {int64_t(cur_.next_shard++), 0};
  open_slot(i, 0);
  return true;
}

bool StreamOrder::next(TarSample& out) {
  const size_t k = readers_.size();
  for (;;) {
    for (size_t step = 0; step < k; ++step) {
      const size_t i = cur_.turn;
      bool open = readers_[i] != nullptr || refill(i);
      while (open && !readers_[i]->next(out)) open = refill(i);
      if (!open) {
        cur_.turn = (i + 1) % k;
        continue;
      }
      ++cur_.slots[i].taken;
      ++cur_.samples;
      ++epoch_samples_;
      cur_.turn = (i + 1) % k;
      return true;
    }
    // Every slot is empty and the order is used up: the next epoch.
    if (epoch_samples_ == 0)
      fail(shards_[0], ": no usable samples in an epoch of ", shards_.size(), " streamed shard(s)");
    epoch_samples_ = 0;
    ++cur_.epoch;
    cur_.next_shard = 0;
    cur_.turn = 0;
    order_ = epoch_shards(shards_.size(), opts_, cur_.epoch);
  }
}

BadRows StreamOrder::bad() const {
  BadRows b = bad_;
  for (const auto& r : readers_)
    if (r) b.merge(r->bad());
  return b;
}

}  // namespace bt::data
