// ParquetDataset: the Hugging Face parquet layout (e.g. `--train_file data/train-*.parquet`) as a
// bt::data::Dataset. The image column is either a struct {bytes: binary, path: string} (HF's Image feature) or
// a plain binary column; the caption column is a string column. At open time the caption and image-path
// columns of every row group are read (they are small), so caption() and image_key() are free; image bytes
// are decoded lazily, one data page at a time (located by walking the chunk's page headers once per row
// group), into an LRU of decoded pages bounded by `cache_mb`.
//
// image_key(i) = the struct's `path` when non-empty, else "#<64-bit hash>-<size>" of the bytes (computed at
// open, streaming one row group at a time), so rows sharing an image share a key.
// A null caption reads as ""; a null image throws from read_image (a bad sample, not a bad file).
// Thread-safe: read_image may be called concurrently; threads wanting the same page wait for one decode.
// Random access is by row; a miss costs one page (pyarrow's default ~1 MB: a few images). row_groups() lists
// the groups for samplers that want locality (loader::SamplerOptions::row_group_ends, shuffle_window_groups);
// window_groups_fitting_cache(k) caps such a window so that its decoded pages fit in half of cache_mb.
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "parquet/parquet_file.h"

namespace bt::parquet {

struct ParquetDatasetOptions {
  std::string image_column = "image";
  std::string caption_column = "image_description";
  size_t cache_mb = 256;                  // decoded image pages kept (at least one is always kept)
  bool hash_images_without_path = true;   // false: rows without a path get a unique key "file:row"
  // Small per-row columns read at open time beside the captions (the contest's caption_choices list<string>,
  // its label): a list column gives each row its strings, a flat one a single string (integers in decimal),
  // a null none. A name selects the leaf of that name, else the one leaf under it ("caption_choices" ->
  // "caption_choices.list.element"). An empty caption_column means no captions (caption() is "").
  std::vector<std::string> extra_columns;
};

class ParquetDataset final : public data::Dataset {
 public:
  // Paths, folders (their *.parquet) or glob patterns (each expanded and sorted; matching nothing is an error).
  explicit ParquetDataset(const std::vector<std::string>& files, ParquetDatasetOptions opts = {});
  // Already opened sources (tests, fuzzing).
  ParquetDataset(std::vector<std::shared_ptr<const ByteSource>> sources, ParquetDatasetOptions opts);
  ~ParquetDataset() override;

  static std::vector<std::string> expand_files(const std::vector<std::string>& patterns);

  size_t size() const override { return captions_.size(); }
  const std::string& caption(size_t i) const override { return captions_.at(i); }
  const std::string& image_key(size_t i) const override { return keys_.at(i); }
  // Row i's values of extra_columns[k].
  const std::vector<std::string>& extra(size_t i, size_t k) const { return extras_.at(k).at(i); }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override;
  std::string describe(size_t i) const override;

  struct Span {
    size_t begin, end;  // rows [begin, end) form one row group
    uint64_t image_bytes;  // uncompressed size of the group's image column chunk (metadata)
  };
  const std::vector<Span>& row_groups() const { return spans_; }
  std::vector<size_t> row_group_ends() const;
  // The largest k' <= k (at least 1) such that any k' groups' image bytes fit in half the page cache.
  size_t window_groups_fitting_cache(size_t k) const;
  // The page cache a locality order with windows of k groups needs: the k largest groups plus a quarter
  // (pages of the next window arrive while the last rows of this one are read), in MB rounded up. A cache much larger than that only delays the
  // reuse of evicted pages' buffers (fresh memory page-faults on every decode until the cache is full).
  size_t cache_mb_for_window(size_t k) const;
  // Changes the page cache budget (before reading starts; not thread-safe against read_image).
  void set_cache_mb(size_t mb) { opts_.cache_mb = mb; }
  size_t cache_mb() const { return opts_.cache_mb; }

  // The default reading order for training and benchmarks: `requested` groups per shuffle window (-1 = the
  // default kDefaultWindowGroups, 0 = fully random rows), capped to fit the page cache, which is then trimmed to
  // what the window needs. Returns the window for SamplerOptions::shuffle_window_groups (0 = fully random) and
  // fills `row_group_ends` for SamplerOptions::row_group_ends. Call before reading starts.
  static constexpr size_t kDefaultWindowGroups = 8;
  size_t prepare_locality_order(int requested, std::vector<size_t>& row_group_ends);

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
  struct SparePool;

  void open(std::vector<std::shared_ptr<const ByteSource>> sources);
  void load_file(size_t f);
  size_t group_of(size_t row) const;
  using Pages = std::vector<ParquetFile::PageLocation>;
  std::shared_ptr<const Pages> pages_of(size_t group_index) const;
  // The decoded page holding row `r` of the group, and the group row where that page starts.
  std::shared_ptr<const ColumnValues> page_of(size_t group_index, size_t r, size_t* first_row) const;

  ParquetDatasetOptions opts_;
  std::vector<FileInfo> files_;
  std::vector<Group> groups_;
  std::vector<Span> spans_;
  std::vector<size_t> file_begin_;  // global index of each file's first row
  std::vector<std::string> captions_, keys_;
  std::vector<std::vector<std::vector<std::string>>> extras_;  // [column][row] -> values

  mutable std::mutex mu_;
  using Key = std::pair<size_t, size_t>;  // (group index, page index)
  mutable std::vector<std::shared_ptr<const Pages>> pages_;  // per group, built on first access
  mutable std::list<Key> lru_;                               // most recent first
  mutable std::map<Key, std::shared_ptr<CacheEntry>> cache_;
  mutable size_t cached_bytes_ = 0;
  std::shared_ptr<SparePool> spare_;  // dropped pages' buffers for the next decodes (outlives us if need be)
};

}  // namespace bt::parquet
