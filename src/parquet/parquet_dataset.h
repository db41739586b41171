// ParquetDataset: the Hugging Face parquet layout (e.g. `--train_file data/train-*.parquet`) as a
// bt::data::Dataset. The image column is either a struct {bytes: binary, path: string} (HF's Image feature) or
// a plain binary column; the caption column is a string column. At open time the caption and image-path
// columns of every row group are read (they are small), so caption() and image_key() are free; image bytes
// are decoded lazily, one row group's image column at a time, into an LRU bounded by `cache_mb`.
//
// image_key(i) = the struct's `path` when non-empty, else "#<64-bit hash>-<size>" of the bytes (computed at
// open, streaming one row group at a time), so rows sharing an image share a key.
// A null caption reads as ""; a null image throws from read_image (a bad sample, not a bad file).
// Thread-safe: read_image may be called concurrently; threads wanting the same row group wait for one decode.
// Random access is by row, but each miss decodes a whole row group's images: samplers should shuffle row
// groups (row_groups()) and rows within a window of groups to keep the cache hit rate high.
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "parquet/parquet_file.h"

namespace bt::parquet {

struct ParquetDatasetOptions {
  std::string image_column = "image";
  std::string caption_column = "image_description";
  size_t cache_mb = 256;                  // decoded image row groups kept (at least one is always kept)
  bool hash_images_without_path = true;   // false: rows without a path get a unique key "file:row"
};

class ParquetDataset final : public data::Dataset {
 public:
  // Paths or glob patterns (each expanded and sorted; a pattern matching nothing is an error).
  explicit ParquetDataset(const std::vector<std::string>& files, ParquetDatasetOptions opts = {});
  // Already opened sources (tests, fuzzing).
  ParquetDataset(std::vector<std::shared_ptr<const ByteSource>> sources, ParquetDatasetOptions opts);
  ~ParquetDataset() override;

  static std::vector<std::string> expand_files(const std::vector<std::string>& patterns);

  size_t size() const override { return captions_.size(); }
  const std::string& caption(size_t i) const override { return captions_.at(i); }
  const std::string& image_key(size_t i) const override { return keys_.at(i); }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override;
  std::string describe(size_t i) const override;

  struct Span {
    size_t begin, end;  // rows [begin, end) form one row group
  };
  const std::vector<Span>& row_groups() const { return spans_; }

 private:
  struct FileInfo {
    std::unique_ptr<ParquetFile> file;
    int bytes_leaf = -1;
    int path_leaf = -1;
  };
  struct Group {
    size_t file, group, begin;
  };
  struct CacheEntry;

  void open(std::vector<std::shared_ptr<const ByteSource>> sources);
  void load_file(size_t f);
  size_t group_of(size_t row) const;
  std::shared_ptr<const ColumnValues> images_of(size_t group_index) const;

  ParquetDatasetOptions opts_;
  std::vector<FileInfo> files_;
  std::vector<Group> groups_;
  std::vector<Span> spans_;
  std::vector<size_t> file_begin_;  // global index of each file's first row
  std::vector<std::string> captions_, keys_;

  mutable std::mutex mu_;
  mutable std::list<size_t> lru_;  // group indices, most recent first
  mutable std::map<size_t, std::shared_ptr<CacheEntry>> cache_;
  mutable size_t cached_bytes_ = 0;
};

}  // namespace bt::parquet
