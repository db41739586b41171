// A Dataset is a random-access table of (image, caption) rows: image folder + JSONL/CSV, WebDataset tar shards
// (indexed once, data/tar_dataset.h), parquet, and the in-memory synthetic set all implement it. source/source.h
// opens the right one from a path.
//
// Contract:
//  - size(), caption(), image_key() and describe() are cheap and safe to call from any thread.
//  - read_image() returns the encoded image bytes (JPEG/PNG/...) of row i; it is thread-safe and may be
//    called concurrently by loader workers. It throws bt::Error whose message names the file (and row) at
//    fault and why, e.g. "data/captions.jsonl:17: image 'a.jpg': No such file or directory".
//  - image_key() identifies the image of a row (rows sharing a key share an image). It is used to avoid
//    duplicate images in one contrastive batch and as the decoded-image cache key.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bt::data {

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual size_t size() const = 0;
  virtual const std::string& caption(size_t i) const = 0;
  virtual const std::string& image_key(size_t i) const = 0;
  virtual void read_image(size_t i, std::vector<uint8_t>& bytes) const = 0;
  // Where row i comes from, for error messages: "captions.jsonl:17 (images/a.jpg)".
  virtual std::string describe(size_t i) const = 0;
  // Rows kept in the table although they failed to parse (a source opened with on_bad_row = skip). The
  // loader skips and counts them like any other bad sample; read_image() on such a row throws bad_reason(i).
  virtual bool is_bad(size_t i) const { return false; }
  virtual std::string bad_reason(size_t i) const { return {}; }
};

}  // namespace bt::data
