// Streamed shards (http(s):// URLs, pipe:COMMAND; byte_stream.h) as a random-access Dataset, for data that is read
// once in order (--validation_file, encode --data, a streamed set in a --train_file mix): every shard is streamed once,
// several at a time, and its samples (captions and encoded image bytes) are kept in memory, in shard order. Memory
// is therefore what the samples hold: past `max_bytes` (every byte kept counts: keys, captions, images and each
// row's bookkeeping) the open fails with one line saying so. (Training on
// streamed --train_shards reads them in bounded memory instead: data/stream_window.h, train/torch/stream_train.h.)
//
// Contract:
//  - Rows are the good samples in shard order, then member order (as TarDataset); image_key(i) = "LOCATION:KEY".
//  - Each shard is read by one ShardReader::open_location (retries and Range resumption inside the stream); a shard
//    that still fails is an error naming its URL/command under kError, or under kSkip its samples read so far are
//    kept and the rest is skipped and counted in bad_rows() (like a corrupt local shard).
//  - The result does not depend on `parallel` (shards are read concurrently, assembled in order).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/shard_stream.h"

namespace bt::data {

// The default in-memory budget of streamed shards read whole (every byte their samples hold).
inline constexpr uint64_t kDefaultMaxStreamedBytes = uint64_t(16) << 30;

class StreamedDataset : public Dataset {
 public:
  static std::unique_ptr<StreamedDataset> open(const std::vector<std::string>& shards, const ShardOptions& opts = {},
                                               uint64_t max_bytes = kDefaultMaxStreamedBytes, int parallel = 4);

  size_t size() const override { return rows_.size(); }
  const std::string& caption(size_t i) const override { return rows_[i].caption; }
  const std::string& image_key(size_t i) const override { return rows_[i].key; }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override { bytes = rows_.at(i).image; }
  std::string describe(size_t i) const override { return rows_.at(i).key; }

  const BadRows& bad_rows() const { return bad_; }
  uint64_t held_bytes() const { return bytes_; }  // what the rows hold, as the budget counts it

 private:
  struct Row {
    std::string key, caption;
    std::vector<uint8_t> image;
  };
  std::vector<Row> rows_;
  BadRows bad_;
  uint64_t bytes_ = 0;
};

}  // namespace bt::data
