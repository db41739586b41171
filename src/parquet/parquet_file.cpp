#include "parquet/parquet_file.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "common/error.h"

namespace bt::parquet {
namespace {
// The largest column chunk read into memory at once; beyond it the file is considered corrupt (the footer's
// limit is kMaxFooterBytes, metadata.h).
constexpr uint64_t kMaxChunk = uint64_t(1) << 34;
// Chunk bytes, reused by each thread (the loader's workers) so multi-MB chunks are not faulted in afresh.
std::vector<uint8_t>& chunk_scratch() {
  static thread_local std::vector<uint8_t> buf;
  return buf;
}
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
  if (flen > size - 12) fail(nm, ": footer length ", flen, " exceeds the file");
  if (flen > kMaxFooterBytes)
    fail(nm, ": footer of ", flen, " bytes, more than the limit of ", kMaxFooterBytes, " (real footers take KBs)");
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
  // Rows are counted once per file, not per chunk: each chunk's own bound (kMaxRowsPerChunkByte, with a floor)
  // would let many row groups, or many tiny chunks, claim a million rows each.
  if (static_cast<uint64_t>(num_rows_) > std::max<uint64_t>(kMinRowsPerFile, size * kMaxRowsPerChunkByte))
    fail(nm, ": ", num_rows_, " rows is implausible for a file of ", size, " bytes (at most ", kMaxRowsPerChunkByte,
         " per byte, or ", kMinRowsPerFile, "): the row groups' counts are corrupt");
  check_chunks_disjoint();
}

void ParquetFile::check_chunks_disjoint() const {
  // Writers give every chunk its own bytes. Row groups pointing at one chunk would decode it once per group
  // (8 groups sharing one 800-byte chunk took 1 GB), so overlapping ranges are refused up front.
  struct Range {
    uint64_t begin, end;
    size_t group, leaf;
  };
  std::vector<Range> ranges;
  for (size_t g = 0; g < meta_.row_groups.size(); ++g)
    for (size_t c = 0; c < meta_.row_groups[g].columns.size(); ++c) {
      const ColumnChunk& cc = meta_.row_groups[g].columns[c];
      if (!cc.has_meta_data || !cc.file_path.empty()) continue;  // refused when read
      int64_t start = cc.meta.data_page_offset;
      if (cc.meta.dictionary_page_offset > 0 && cc.meta.dictionary_page_offset < start)
        start = cc.meta.dictionary_page_offset;
      if (start < 0 || cc.meta.total_compressed_size <= 0) continue;  // refused when read (chunk_range)
      const uint64_t b = static_cast<uint64_t>(start);
      const uint64_t len = static_cast<uint64_t>(cc.meta.total_compressed_size);
      ranges.push_back({b, b > UINT64_MAX - len ? UINT64_MAX : b + len, g, c});
    }
  std::sort(ranges.begin(), ranges.end(), [](const Range& x, const Range& y) { return x.begin < y.begin; });
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].begin < ranges[i - 1].end)
      fail(source_->name(), ": row group ", ranges[i].group, ", column '", schema_.leaves[ranges[i].leaf].name,
           "' shares bytes ", ranges[i].begin, ".. with row group ", ranges[i - 1].group, ", column '",
           schema_.leaves[ranges[i - 1].leaf].name, "' (column chunks must not overlap: the footer is corrupt)");
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

std::pair<uint64_t, uint64_t> ParquetFile::chunk_range(size_t g, size_t leaf) const {
  const ColumnChunk& cc = meta_.row_groups[g].columns[leaf];
  if (!cc.file_path.empty()) fail("data in an external file ('", cc.file_path, "') is not supported");
  if (!cc.has_meta_data) fail("column chunk has no metadata");
  const ColumnMetaData& m = cc.meta;
  if (m.path_in_schema != schema_.leaves[leaf].path) fail("chunk's path_in_schema does not match the schema");
  int64_t start = m.data_page_offset;
  if (m.dictionary_page_offset > 0 && m.dictionary_page_offset < start) start = m.dictionary_page_offset;
  const uint64_t size = source_->size();
  if (start < 4 || m.total_compressed_size <= 0 || static_cast<uint64_t>(start) >= size ||
      static_cast<uint64_t>(m.total_compressed_size) > size - static_cast<uint64_t>(start) ||
      static_cast<uint64_t>(m.total_compressed_size) > kMaxChunk)
    fail("chunk range ", start, "+", m.total_compressed_size, " lies outside the file (", size, " bytes)");
  return {static_cast<uint64_t>(start), static_cast<uint64_t>(m.total_compressed_size)};
}

void ParquetFile::rethrow(size_t g, size_t leaf) const {
  const std::string where = str(source_->name(), ": row group ", g, ", column '", schema_.leaves[leaf].name, "': ");
  try {
    throw;
  } catch (const Error& e) {
    fail(where, e.what());
  } catch (const std::bad_alloc&) {
    fail(where, "out of memory decoding the chunk");
  }
}

ColumnValues ParquetFile::read_column(size_t g, size_t leaf, uint64_t max_value_bytes) const {
  if (g >= meta_.row_groups.size() || leaf >= schema_.leaves.size())
    fail(source_->name(), ": row group ", g, " / column ", leaf, " out of range");
  try {
    auto [start, len] = chunk_range(g, leaf);
    std::vector<uint8_t>& bytes = chunk_scratch();
    bytes.resize(static_cast<size_t>(len));
    source_->read(start, static_cast<size_t>(len), bytes.data());
    const RowGroup& rg = meta_.row_groups[g];
    return decode_column_chunk(bytes.data(), static_cast<size_t>(len), schema_.leaves[leaf], rg.columns[leaf].meta,
                               rg.num_rows, {}, max_value_bytes);
  } catch (...) {
    rethrow(g, leaf);
  }
}

std::vector<ParquetFile::PageLocation> ParquetFile::page_locations(size_t g, size_t leaf) const {
  if (g >= meta_.row_groups.size() || leaf >= schema_.leaves.size())
    fail(source_->name(), ": row group ", g, " / column ", leaf, " out of range");
  std::vector<PageLocation> out;
  try {
    auto [start, len] = chunk_range(g, leaf);
    const uint64_t end = start + len;
    const size_t rows = static_cast<size_t>(meta_.row_groups[g].num_rows);
    uint64_t pos = start;
    size_t row = 0;
    std::vector<uint8_t> buf;
    while (row < rows) {
      if (pos >= end) fail("chunk ends after ", row, " of ", rows, " rows");
      // Page headers are small unless they carry large statistics: grow the read until the header parses.
      size_t want = static_cast<size_t>(std::min<uint64_t>(end - pos, 256));
      PageHeader h;
      size_t hlen = 0;
      for (;;) {
        buf.resize(want);
        source_->read(pos, want, buf.data());
        try {
          h = parse_page_header(buf.data(), want, &hlen);
          break;
        } catch (const Error&) {
          if (want == end - pos || want >= (size_t(1) << 24)) throw;
          want = static_cast<size_t>(std::min<uint64_t>(end - pos, want * 16));
        }
      }
      if (h.compressed_page_size < 0 || static_cast<uint64_t>(h.compressed_page_size) > end - pos - hlen)
        fail("page at offset ", pos, ": ", h.compressed_page_size, " bytes run past the end of the chunk");
      PageLocation loc;
      loc.offset = pos;
      loc.length = hlen + static_cast<uint64_t>(h.compressed_page_size);
      if (h.type == PageType::DictionaryPage) {
        loc.dictionary = true;
        out.push_back(loc);
      } else if (h.type == PageType::DataPage || h.type == PageType::DataPageV2) {
        if (h.num_values < 0 || static_cast<size_t>(h.num_values) > rows - row)
          fail("page at offset ", pos, ": ", h.num_values, " values, only ", rows - row, " rows remain");
        loc.first_row = row;
        loc.num_rows = static_cast<size_t>(h.num_values);
        row += loc.num_rows;
        out.push_back(loc);
      }
      pos += loc.length;
    }
  } catch (...) {
    rethrow(g, leaf);
  }
  return out;
}

ColumnValues ParquetFile::read_pages(size_t g, size_t leaf, const std::vector<PageLocation>& locs, size_t first,
                                     size_t last, ColumnValues reuse) const {
  if (first > last || last >= locs.size() || locs[first].dictionary || locs[last].dictionary)
    fail(source_->name(), ": bad page range ", first, "..", last);
  try {
    const PageLocation* dict = nullptr;
    for (const PageLocation& l : locs)
      if (l.dictionary) {
        dict = &l;
        break;
      }
    const uint64_t from = locs[first].offset, to = locs[last].offset + locs[last].length;
    const uint64_t dict_len = dict ? dict->length : 0;
    if (to < from || to - from > kMaxChunk || dict_len > kMaxChunk) fail("bad page locations");
    const size_t total = static_cast<size_t>(dict_len + (to - from));
    std::vector<uint8_t>& bytes = chunk_scratch();
    bytes.resize(total);
    if (dict) source_->read(dict->offset, static_cast<size_t>(dict_len), bytes.data());
    source_->read(from, static_cast<size_t>(to - from), bytes.data() + dict_len);
    ColumnMetaData m = meta_.row_groups[g].columns[leaf].meta;
    const size_t rows = locs[last].first_row + locs[last].num_rows - locs[first].first_row;
    m.num_values = static_cast<int64_t>(rows);
    return decode_column_chunk(bytes.data(), total, schema_.leaves[leaf], m, static_cast<int64_t>(rows),
                               std::move(reuse));
  } catch (...) {
    rethrow(g, leaf);
  }
}

}  // namespace bt::parquet
