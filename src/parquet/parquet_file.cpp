#include "parquet/parquet_file.h"

#include <cstring>
#include <new>

#include "common/error.h"

namespace bt::parquet {
namespace {
// The largest footer or column chunk read into memory at once; beyond it the file is considered corrupt.
constexpr uint64_t kMaxFooter = uint64_t(1) << 30;
constexpr uint64_t kMaxChunk = uint64_t(1) << 34;
}  // namespace

ParquetFile::ParquetFile(std::shared_ptr<const ByteSource> source) : source_(std::move(source)) {
  const std::string& nm = source_->name();
  const uint64_t size = source_->size();
  if (size < 12) fail(nm, ": not a parquet file (", size, " bytes; too short)");
  uint8_t tail[8], head[4];
  source_->read(size - 8, 8, tail);
  source_->read(0, 4, head);
  if (std::memcmp(tail + 4, "PARE", 4) == 0) fail(nm, ": encrypted parquet files are not supported");
  if (std::memcmp(tail + 4, "PAR1", 4) != 0 || std::memcmp(head, "PAR1", 4) != 0)
    fail(nm, ": not a parquet file (no PAR1 magic)");
  uint64_t flen = uint64_t(tail[0]) | uint64_t(tail[1]) << 8 | uint64_t(tail[2]) << 16 | uint64_t(tail[3]) << 24;
  if (flen > size - 12 || flen > kMaxFooter) fail(nm, ": footer length ", flen, " exceeds the file");
  std::vector<uint8_t> footer(flen);
  source_->read(size - 8 - flen, flen, footer.data());
  try {
    meta_ = parse_file_metadata(footer.data(), footer.size());
    schema_ = build_schema(meta_.schema);
  } catch (const Error& e) {
    fail(nm, ": footer: ", e.what());
  }
  for (size_t g = 0; g < meta_.row_groups.size(); ++g) {
    const RowGroup& rg = meta_.row_groups[g];
    if (rg.num_rows < 0 || rg.num_rows > (int64_t(1) << 40) - num_rows_)
      fail(nm, ": row group ", g, ": bad row count ", rg.num_rows);
    if (rg.columns.size() != schema_.leaves.size())
      fail(nm, ": row group ", g, " has ", rg.columns.size(), " column chunks; the schema has ",
           schema_.leaves.size(), " leaf columns");
    num_rows_ += rg.num_rows;
  }
}

int ParquetFile::find_column(std::string_view dotted) const {
  for (size_t i = 0; i < schema_.leaves.size(); ++i)
    if (schema_.leaves[i].name == dotted) return static_cast<int>(i);
  return -1;
}

std::string ParquetFile::describe_columns() const {
  std::string s;
  for (size_t i = 0; i < schema_.top.size(); ++i) {
    if (i) s += ", ";
    s += schema_.top[i];
    if (schema_.top_is_group[i]) {
      // List the group's direct children so "image{bytes, path}" shows what a struct holds.
      std::string kids;
      std::string prev;
      for (const LeafColumn& c : schema_.leaves) {
        if (c.path.size() < 2 || c.path[0] != schema_.top[i] || c.path[1] == prev) continue;
        kids += (kids.empty() ? "" : ", ") + c.path[1];
        prev = c.path[1];
      }
      s += "{" + kids + "}";
    }
  }
  return s;
}

ColumnValues ParquetFile::read_column(size_t g, size_t leaf) const {
  const std::string& nm = source_->name();
  if (g >= meta_.row_groups.size() || leaf >= schema_.leaves.size())
    fail(nm, ": row group ", g, " / column ", leaf, " out of range");
  const LeafColumn& col = schema_.leaves[leaf];
  const RowGroup& rg = meta_.row_groups[g];
  const ColumnChunk& cc = rg.columns[leaf];
  try {
    if (!cc.file_path.empty()) fail("data in an external file ('", cc.file_path, "') is not supported");
    if (!cc.has_meta_data) fail("column chunk has no metadata");
    const ColumnMetaData& m = cc.meta;
    if (m.path_in_schema != col.path) fail("chunk's path_in_schema does not match the schema");
    int64_t start = m.data_page_offset;
    if (m.dictionary_page_offset > 0 && m.dictionary_page_offset < start) start = m.dictionary_page_offset;
    const uint64_t size = source_->size();
    if (start < 4 || m.total_compressed_size <= 0 || static_cast<uint64_t>(start) >= size ||
        static_cast<uint64_t>(m.total_compressed_size) > size - static_cast<uint64_t>(start) ||
        static_cast<uint64_t>(m.total_compressed_size) > kMaxChunk)
      fail("chunk range ", start, "+", m.total_compressed_size, " lies outside the file (", size, " bytes)");
    std::vector<uint8_t> bytes(static_cast<size_t>(m.total_compressed_size));
    source_->read(static_cast<uint64_t>(start), bytes.size(), bytes.data());
    return decode_column_chunk(bytes.data(), bytes.size(), col, m, rg.num_rows);
  } catch (const Error& e) {
    fail(nm, ": row group ", g, ", column '", col.name, "': ", e.what());
  } catch (const std::bad_alloc&) {
    fail(nm, ": row group ", g, ", column '", col.name, "': out of memory decoding the chunk");
  }
}

}  // namespace bt::parquet
