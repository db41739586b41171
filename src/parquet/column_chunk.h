// Decoding of one column chunk (its dictionary page and data pages v1/v2) of a flat leaf column — one value
// per row, possibly null through definition levels (e.g. the `bytes` field of an optional image struct) — or of
// a list column (max_rep 1, e.g. HF's list<string> `caption_choices`): then the per-value arrays hold the
// elements and list_begin[r] .. list_begin[r+1] are row r's (an empty or null list has none).
// Supports BOOLEAN/INT32/INT64/BYTE_ARRAY with PLAIN, PLAIN_DICTIONARY/RLE_DICTIONARY and (booleans) RLE.
// Every size, count, level and dictionary index is checked; violations throw bt::Error (without file context:
// ParquetFile adds it).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "parquet/metadata.h"
#include "parquet/schema.h"

namespace bt::parquet {

struct ColumnValues {
  Type type = Type::Boolean;
  size_t num_rows = 0;
  std::vector<uint8_t> def;        // definition level of each row (max_def: value present)
  std::vector<uint8_t> present;    // 1 where the row has a value
  std::vector<uint64_t> offsets;   // BYTE_ARRAY: row r is data[offsets[r], offsets[r+1]); null rows are empty
  std::vector<uint8_t> data;
  std::vector<int64_t> ints;       // INT32 / INT64 / BOOLEAN (0/1) per row; 0 for nulls
  std::vector<uint64_t> list_begin;  // list columns: num_rows + 1 element offsets (empty for flat columns)

  std::string_view bytes(size_t r) const {
    return {reinterpret_cast<const char*>(data.data()) + offsets[r], static_cast<size_t>(offsets[r + 1] - offsets[r])};
  }
  size_t memory_bytes() const {
    return def.size() + present.size() + offsets.size() * 8 + data.size() + ints.size() * 8 + list_begin.size() * 8;
  }
};

// A chunk claiming more rows than max(2^20, kMaxRowsPerChunkByte * its size) is corrupt: decoded rows take
// 10-18 bytes each, so this bounds a chunk's decoded index to ~300x its size (RLE lets a few bytes claim
// billions of null rows).
inline constexpr size_t kMaxRowsPerChunkByte = 16;

// BYTE_ARRAY values decoded from a chunk may take at most value_budget(its size) bytes: max(kMinValueBudget,
// kMaxValueBytesPerChunkByte x size). Dictionary indices let a few bytes repeat a large dictionary value (an
// 856-byte file asked for 1.42 GB); real columns stay far below (images ~1x, repeated captions < 100x).
inline constexpr uint64_t kMaxValueBytesPerChunkByte = 1024;
inline constexpr uint64_t kMinValueBudget = uint64_t(64) << 20;
inline uint64_t value_budget(size_t chunk_bytes) {
  const uint64_t b = uint64_t(chunk_bytes);
  return b > kMinValueBudget / kMaxValueBytesPerChunkByte ? b * kMaxValueBytesPerChunkByte : kMinValueBudget;
}

// `reuse`: a spent ColumnValues whose buffers are refilled (capacity kept), so a caller decoding page after
// page does not fault in fresh memory for each (that costs more than the decode on a VM).
// `max_value_bytes`: a tighter cap than value_budget(size) on the BYTE_ARRAY values (a caller's budget for the
// whole file); past either, bt::Error.
ColumnValues decode_column_chunk(const uint8_t* chunk, size_t size, const LeafColumn& leaf,
                                 const ColumnMetaData& meta, int64_t num_rows, ColumnValues reuse = {},
                                 uint64_t max_value_bytes = UINT64_MAX);

}  // namespace bt::parquet
