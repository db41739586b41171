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
#include <vector>

#include "parquet/byte_source.h"
#include "parquet/column_chunk.h"
#include "parquet/metadata.h"
#include "parquet/schema.h"

namespace bt::parquet {

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

  // Decodes column `leaf` of row group `g`.
  ColumnValues read_column(size_t g, size_t leaf) const;

 private:
  std::shared_ptr<const ByteSource> source_;
  FileMetaData meta_;
  Schema schema_;
  int64_t num_rows_ = 0;
};

}  // namespace bt::parquet
