// The sample sequence of one epoch over WebDataset tar shards, for the loader's streaming mode: a reader
// thread reads this rank's shards (order shuffled from (seed, epoch), sharded like the Sampler does rows)
// through data::ShardStream, passes the samples through a bounded shuffle buffer, and queues them. The
// sequence is a pure function of (shards, seed, epoch, rank, world_size, buffer size): the same for any
// number of loader workers. Memory: at most shuffle_buffer + queue_capacity encoded samples.
//
// Contract:
//  - pop() returns the samples in sequence order, false after the last one. A shard error (with
//    ShardOptions::on_bad = kError) is thrown by the pop() that reaches it, as bt::Error naming the shard.
//  - The destructor stops and joins the reader thread, also while a pop() or the reader blocks.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "data/shard_stream.h"
#include "loader/sampler.h"

namespace bt::loader {

struct StreamOptions {
  size_t shuffle_buffer = 512;  // samples; 0 or 1 = no shuffling (shard order only)
  size_t queue_capacity = 64;   // samples read ahead of the workers
  size_t skip = 0;              // samples of the sequence to drop first (resume)
};

class StreamSource {
 public:
  StreamSource(const std::vector<std::string>& shards, const data::ShardOptions& shard_opts,
               const SamplerOptions& sampling, uint64_t epoch, StreamOptions opts);
  ~StreamSource();
  StreamSource(const StreamSource&) = delete;
  StreamSource& operator=(const StreamSource&) = delete;

  bool pop(data::TarSample& out);
  data::BadRows bad() const;  // samples the shard reader skipped (on_bad = kSkip)

 private:
  void run(std::vector<std::string> shards, data::ShardOptions shard_opts, uint64_t seed);
  void push(data::TarSample&& s);  // blocks while the queue is full

  StreamOptions opt_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<data::TarSample> queue_;
  bool done_ = false, stop_ = false;
  std::string error_;
  data::BadRows bad_;
  std::thread thread_;
};

}  // namespace bt::loader
