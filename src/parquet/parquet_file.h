// One parquet file: its footer is read and parsed at construction; column chunks are read on demand, one
// (row group, column) at a time, by pread of exactly the chunk's byte range — memory stays bounded by the
// largest chunk, whatever the file's size. Thread-safe after construction (read_column is const).
// Errors name the file, and for chunks the row group and column:
//   "train-0.parquet: row group 2, column 'image.bytes': page 3: dictionary index 9 out of range (...)".
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "parquet/byte_source.h"
#include "parquet/column_chunk.h"
#include "parquet/metadata.h"
#include "parquet/schema.h"

namespace bt::parquet {

// A file may claim at most max(kMinRowsPerFile, kMaxRowsPerChunkByte x its size) rows in all its row groups
// together, and its column chunks' byte ranges may not overlap: both checked at construction, so row counts
// cannot be multiplied by row groups that share (or tiny chunks that each claim) rows.
inline constexpr uint64_t kMinRowsPerFile = uint64_t(1) << 20;

class ParquetFile {
 public:
  explicit ParquetFile(std::shared_ptr<const ByteSource> source);
  static ParquetFile open(const std::string& path) { return ParquetFile(open_file_source(path)); }

  const std::string& name() const { return source_->name(); }
  const FileMetaData& metadata() const { return meta_; }
  const Schema& schema() const { return schema_; }
  size_t num_row_groups() const { return meta_.row_groups.size(); }
  int64_t row_group_rows(size_t g) const { return meta_.row_groups[g].num_rows; }
  int64_t num_rows() const { return num_rows_; }

  // Index of the leaf column with this dotted name ("image.bytes"), or -1.
  int find_column(std::string_view dotted) const;
  // "image, image_description, contest_number, ..." (top-level fields; groups as "image{bytes, path}").
  std::string describe_columns() const;

  uint64_t file_size() const { return source_->size(); }

  // Decodes column `leaf` of row group `g`; its BYTE_ARRAY values may take at most `max_value_bytes` (and
  // value_budget(chunk size), column_chunk.h).
  ColumnValues read_column(size_t g, size_t leaf, uint64_t max_value_bytes = UINT64_MAX) const;

  // Where the pages of a chunk lie, found by reading only their headers (small preads), so that random
  // access can decode one page instead of the whole chunk.
  struct PageLocation {
    uint64_t offset = 0;   // of the page header in the file
    uint64_t length = 0;   // header + body
    size_t first_row = 0;  // first row (within the group) of a data page
    size_t num_rows = 0;   // 0 for the dictionary page
    bool dictionary = false;
  };
  std::vector<PageLocation> page_locations(size_t g, size_t leaf) const;
  // Decodes data pages locs[first..last] (and the chunk's dictionary page, if any): the rows
  // [locs[first].first_row, locs[last].first_row + locs[last].num_rows) of the group.
  ColumnValues read_pages(size_t g, size_t leaf, const std::vector<PageLocation>& locs, size_t first,
                          size_t last, ColumnValues reuse = {}) const;

 private:
  // Chunks' byte ranges may not overlap (throws naming both).
  void check_chunks_disjoint() const;
  // Validated [start, start + length) of a chunk; throws without file context.
  std::pair<uint64_t, uint64_t> chunk_range(size_t g, size_t leaf) const;
  [[noreturn]] void rethrow(size_t g, size_t leaf) const;

  std::shared_ptr<const ByteSource> source_;
  FileMetaData meta_;
  Schema schema_;
  int64_t num_rows_ = 0;
};

}  // namespace bt::parquet
