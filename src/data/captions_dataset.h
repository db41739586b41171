// An image folder described by a captions file (JSONL or CSV), as a random-access bt::data::Dataset.
//
// Contract:
//  - open_dataset(path): a directory DIR means DIR/captions.jsonl, else DIR/captions.csv; a .jsonl/.json/.csv
//    path is that file. Image paths in the file are relative to the file's folder (absolute ones are kept).
//  - image_key(i) is the lexically normalised image path (folder/rel), so rows sharing an image share a key.
//  - read_image(i) reads the whole file on each call (thread-safe, no shared state); errors name the row:
//    "DIR/captions.jsonl:17: image 'a.jpg': No such file or directory".
//  - Images are read only from regular files (a FIFO, a device such as /dev/zero or a folder is an error, and a
//    FIFO never blocks), of at most CaptionsOptions::max_image_bytes (checked before reading); messages never
//    quote a file's bytes.
//  - Bad rows: see captions_parse.h. With on_bad_row = kSkip they stay in the table with is_bad(i) == true,
//    and bad_rows() holds their count and first reasons.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/captions_parse.h"
#include "data/dataset.h"

namespace bt::data {

class CaptionsDataset : public Dataset {
 public:
  // `name` is the captions file path used in messages; `folder` is what image paths are relative to.
  CaptionsDataset(ParsedCaptions parsed, std::string name, std::string folder,
                  uint64_t max_image_bytes = kDefaultMaxImageBytes);

  size_t size() const override { return rows_.size(); }
  const std::string& caption(size_t i) const override { return rows_[i].caption; }
  const std::string& image_key(size_t i) const override { return images_[rows_[i].image]; }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override;
  std::string describe(size_t i) const override;
  bool is_bad(size_t i) const override { return rows_[i].bad; }
  std::string bad_reason(size_t i) const override;

  const BadRows& bad_rows() const { return bad_; }
  size_t num_images() const { return images_.size() - 1; }  // distinct images (slot 0 is the bad rows' "")
  const std::string& path() const { return name_; }

 private:
  struct Row {
    std::string caption;
    uint32_t image;  // index into images_
    uint32_t line;
    bool bad;
    std::string reason;
  };
  std::vector<Row> rows_;
  std::vector<std::string> images_;     // resolved paths
  std::vector<std::string> as_written_;  // paths as in the file, for messages
  BadRows bad_;
  std::string name_;
  uint64_t max_image_bytes_;
};

// Opens a captions file or a folder holding captions.jsonl / captions.csv (see the contract above).
std::unique_ptr<CaptionsDataset> open_captions(const std::string& path, const CaptionsOptions& opts = {});
// open_captions(), or for tar shards (classify_source() == kShards) a TarDataset (data/tar_dataset.h) using
// opts.caption_column for key.json captions, opts.on_bad_row and opts.max_image_bytes as its member limit. Parquet is not handled here.
std::unique_ptr<Dataset> open_dataset(const std::string& path, const CaptionsOptions& opts = {});

// Which reader a --data value needs. kShards: a .tar path, a brace/glob pattern of tars, a folder holding
// only *.tar shards (expand with expand_shard_pattern()), or streamed shards: http(s):// URLs and pipe:COMMAND, brace
// patterns expanded (read whole into memory by data/streamed_dataset.h); kParquet: a .parquet file or a folder of them.
enum class SourceKind { kCaptions, kShards, kParquet };
SourceKind classify_source(const std::string& path);

// Reads a whole regular file of at most max_bytes; throws bt::Error "PATH: why". Used for captions files and
// images.
void read_file(const std::string& path, std::vector<uint8_t>& bytes, uint64_t max_bytes = UINT64_MAX);
std::string read_text_file(const std::string& path);
// A captions or matching file as text, refusing (bt::Error "PATH:LINE: line longer than the limit of N bytes
// ...") as soon as one line passes `max_line_bytes`: memory stays within the cap plus one 1 MiB block beyond what
// the earlier lines take. Opened through the file gate (regular files only).
std::string read_text_file_capped(const std::string& path, uint64_t max_line_bytes);

}  // namespace bt::data
