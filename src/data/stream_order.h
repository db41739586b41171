// The order streamed shards are read in for training, with bounded memory (issue 45, layer 2's core): a set that
// cannot be indexed cheaply is read shard by shard, several at once, and its sample sequence is a pure function of
// (seed, epoch, rank, world_size, the data) -- never of timing or of how many loader workers decode it.
//
// Contract:
//  - Epoch e's shard order is a permutation of the shards drawn from (seed, e); rank r takes its positions r,
//    r + world_size, ... (ranks read disjoint shards, as the sampler shards rows). Fewer shards than ranks is an
//    error naming the set.
//  - open_shards K readers are open at once (slots). Samples are taken round-robin over the slots, one each; a
//    slot whose shard ends takes the next shard of the order at once. When the epoch's shards are all read the
//    stream goes on with epoch e + 1 (a new permutation): it never ends (an epoch without one good sample is an
//    error), so a trainer bounds it with --max_steps, as HF's IterableDataset.
//  - cursor() after the k-th sample is the exact-resume state: the epoch, the order's next shard, each slot's shard
//    and samples taken, whose turn is next. StreamOrder(..., cursor) yields samples k+1, k+2, ... of the
//    uninterrupted sequence (each slot's shard is reopened and its taken samples skipped).
//  - Bad samples and broken shards follow ShardOptions::on_bad (shard_stream.h); skipped ones count in bad().
//  - Memory: K readers (each one sample plus its stream's buffer).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/shard_stream.h"

namespace bt::data {

struct StreamOrderOptions {
  uint64_t seed = 42;
  int rank = 0, world_size = 1;
  int open_shards = 4;  // K
};

struct StreamCursor {
  struct Slot {
    int64_t shard = -1;  // position in the rank's epoch order; -1: empty
    uint64_t taken = 0;  // samples of it already returned
    bool operator==(const Slot&) const = default;
  };
  uint64_t epoch = 0;
  size_t next_shard = 0;  // next position of the rank's epoch order to open
  size_t turn = 0;        // the slot that gives the next sample
  uint64_t samples = 0;   // samples returned since the start of the run (for messages and checks)
  std::vector<Slot> slots;
  std::string to_json() const;
  static StreamCursor from_json(const std::string& text);  // throws bt::Error on a malformed state
  bool operator==(const StreamCursor&) const = default;
};

class StreamOrder {
 public:
  StreamOrder(std::vector<std::string> shards, ShardOptions shard_opts, StreamOrderOptions opts,
              StreamCursor start = {});
  ~StreamOrder();
  // The next sample of the sequence (always true, or throws).
  bool next(TarSample& out);
  const StreamCursor& cursor() const { return cur_; }
  BadRows bad() const;

  // This rank's shards (indices into the set) in epoch `epoch`'s order.
  static std::vector<size_t> epoch_shards(size_t num_shards, const StreamOrderOptions& o, uint64_t epoch);

 private:
  void open_slot(size_t i, uint64_t skip);
  bool refill(size_t i);

  std::vector<std::string> shards_;
  ShardOptions shard_opts_;
  StreamOrderOptions opts_;
  StreamCursor cur_;
  std::vector<size_t> order_;  // this rank's shards of cur_.epoch
  std::vector<std::unique_ptr<ShardReader>> readers_;
  BadRows bad_;  // of closed readers
  uint64_t epoch_samples_ = 0;
};

}  // namespace bt::data
