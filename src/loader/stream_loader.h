// The loader over WebDataset tar shards read as a stream (datasets larger than memory, compressed shards).
// A StreamSource yields this epoch's sample sequence (shard order shuffled per epoch, a bounded shuffle
// buffer); the sequence is cut into chunks of chunk_batches * batch_size samples held in memory, and two
// ordinary Loaders take turns on them (one decodes chunk c + 1 while the other's batches of chunk c are
// consumed), so the workers never drain at chunk boundaries.
//
// Contract: as Loader, except
//  - Batch::rows holds positions in the epoch's sample sequence, Batch::image_keys the "SHARD:KEY" keys;
//  - the number of batches is unknown until the stream ends (the last batch may be short);
//  - on_bad_sample=skip replaces a bad image from later in the same chunk; samples the tar reader itself
//    rejects (missing caption, truncated member) are dropped by it and counted in stats().skipped too;
//  - resuming at (epoch, k * batch_size) gives the uninterrupted run's batches when no sample was bad;
//  - dedupe_images_in_batch and the decoded cache do not apply (every tar sample is its own image).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "data/shard_stream.h"
#include "loader/loader.h"
#include "loader/stream_source.h"

namespace bt::loader {

class ChunkDataset;

class StreamLoader {
 public:
  StreamLoader(std::vector<std::string> shards, data::ShardOptions shard_opts, LoaderOptions options,
               StreamOptions stream = {}, size_t chunk_batches = 4);
  ~StreamLoader();

  void start_epoch(uint64_t epoch, size_t start_sample = 0);
  BatchPtr next();
  LoaderStats stats() const;

 private:
  struct Part {
    std::shared_ptr<ChunkDataset> chunk;
    std::unique_ptr<Loader> loader;
    size_t first = 0;   // sequence position of the chunk's first sample
    bool busy = false;  // holds a chunk not yet fully delivered
    std::string error;  // the stream failed after this chunk: thrown once it is delivered
  };
  bool refill(Part& p);  // false when the stream has no more samples

  std::vector<std::string> shards_;
  data::ShardOptions shard_opts_;
  LoaderOptions opt_;
  StreamOptions stream_opt_;
  size_t chunk_;  // samples per chunk
  uint64_t epoch_ = 0;
  size_t next_pos_ = 0;  // sequence position of the next sample taken from the stream
  std::unique_ptr<StreamSource> source_;
  Part parts_[2];
  int cur_ = 0;
  bool started_ = false;
  data::BadRows stream_bad_;  // rejected by the tar reader in earlier epochs
};

}  // namespace bt::loader
