// WebDataset tar shards as a random-access Dataset: one indexing pass reads each shard's headers and
// captions (image data is skipped, not read), then read_image() preads the image bytes from the shard file.
// Memory holds only captions and offsets, so shards larger than memory work. Needs uncompressed .tar shards
// (compressed ones can only be streamed, see shard_stream.h).
//
// Contract:
//  - Rows are the good samples in shard order, then member order. image_key(i) = "SHARD:KEY".
//  - Bad samples follow ShardOptions::on_bad: kError throws at open time; kSkip leaves them out and counts
//    them in bad_rows().
//  - read_image() is thread-safe (open + pread per call) and throws "SHARD: sample 'KEY': why".
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/shard_stream.h"

namespace bt::data {

class TarDataset : public Dataset {
 public:
  static std::unique_ptr<TarDataset> open(const std::vector<std::string>& shards, const ShardOptions& opts = {});

  size_t size() const override { return rows_.size(); }
  const std::string& caption(size_t i) const override { return rows_[i].caption; }
  const std::string& image_key(size_t i) const override { return rows_[i].key; }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override;
  std::string describe(size_t i) const override;

  const BadRows& bad_rows() const { return bad_; }
  const std::vector<std::string>& shards() const { return shards_; }

 private:
  struct Row {
    std::string key, caption;
    uint64_t offset, size;
    uint32_t shard;
  };
  std::vector<std::string> shards_;
  std::vector<Row> rows_;
  BadRows bad_;
};

// expand_shard_pattern(pattern) + TarDataset::open.
std::unique_ptr<TarDataset> open_tar_dataset(const std::string& pattern, const ShardOptions& opts = {});

}  // namespace bt::data
