// The parts of parquet's FileMetaData and PageHeader (parquet-format's parquet.thrift) that bridgetune reads,
// decoded from the Thrift compact protocol. Unknown fields are skipped; malformed input throws bt::Error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bt::parquet {

enum class Type : int32_t {
  Boolean = 0, Int32 = 1, Int64 = 2, Int96 = 3, Float = 4, Double = 5, ByteArray = 6, FixedLenByteArray = 7,
};
enum class Repetition : int32_t { Required = 0, Optional = 1, Repeated = 2 };
enum class Codec : int32_t { Uncompressed = 0, Snappy = 1, Gzip = 2, Lzo = 3, Brotli = 4, Lz4 = 5, Zstd = 6, Lz4Raw = 7 };
enum class Encoding : int32_t {
  Plain = 0, PlainDictionary = 2, Rle = 3, BitPacked = 4, DeltaBinaryPacked = 5, DeltaLengthByteArray = 6,
  DeltaByteArray = 7, RleDictionary = 8, ByteStreamSplit = 9,
};
enum class PageType : int32_t { DataPage = 0, IndexPage = 1, DictionaryPage = 2, DataPageV2 = 3 };

const char* type_name(Type t);
const char* codec_name(Codec c);
const char* encoding_name(Encoding e);

struct SchemaElement {
  bool has_type = false;
  Type type = Type::Boolean;
  Repetition repetition = Repetition::Required;
  std::string name;
  int32_t num_children = 0;
  int32_t converted_type = -1;  // -1: none
  int32_t logical_type = -1;    // the LogicalType union's field id, -1: none
};

struct ColumnMetaData {
  Type type = Type::Boolean;
  std::vector<Encoding> encodings;
  std::vector<std::string> path_in_schema;
  Codec codec = Codec::Uncompressed;
  int64_t num_values = 0;
  int64_t total_uncompressed_size = 0;
  int64_t total_compressed_size = 0;
  int64_t data_page_offset = -1;
  int64_t dictionary_page_offset = -1;  // -1: none
};

struct ColumnChunk {
  std::string file_path;  // non-empty: the data lives in another file (unsupported)
  bool has_meta_data = false;
  ColumnMetaData meta;
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  int64_t num_rows = 0;
};

struct FileMetaData {
  int32_t version = 0;
  std::vector<SchemaElement> schema;
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  std::string created_by;
};

struct PageHeader {
  PageType type = PageType::DataPage;
  int32_t uncompressed_page_size = 0;
  int32_t compressed_page_size = 0;
  // Data page v1 and v2, dictionary page.
  int32_t num_values = 0;
  Encoding encoding = Encoding::Plain;
  Encoding definition_level_encoding = Encoding::Rle;
  Encoding repetition_level_encoding = Encoding::Rle;
  // Data page v2 only.
  int32_t num_nulls = 0;
  int32_t num_rows = 0;
  int32_t definition_levels_byte_length = 0;
  int32_t repetition_levels_byte_length = 0;
  bool is_compressed = true;
  bool has_page_header = false;  // the header struct matching `type` was present
};

// Hard limits on a footer. Real Hugging Face footers are KBs with a few dozen schema elements and at most
// thousands of row groups; without limits a hostile footer amplifies (each one-byte list element becomes a
// 50-150-byte struct). List counts are never used to reserve memory; the decoded metadata's estimated size
// is capped instead, so parsing needs at most about kMaxFooterMemory whatever the counts claim.
inline constexpr uint64_t kMaxFooterBytes = uint64_t(16) << 20;
inline constexpr size_t kMaxSchemaElements = 10000;
inline constexpr size_t kMaxRowGroups = 100000;
inline constexpr size_t kMaxColumnsPerRowGroup = kMaxSchemaElements;
inline constexpr size_t kMaxListPerColumn = 64;  // encodings, path_in_schema depth
inline constexpr size_t kMaxFooterMemory = size_t(128) << 20;

// Throws bt::Error("thrift: ...") for malformed input and for footers beyond the limits above.
FileMetaData parse_file_metadata(const uint8_t* data, size_t size);
// Parses one page header at data[0..size); returns its encoded length in *header_size.
PageHeader parse_page_header(const uint8_t* data, size_t size, size_t* header_size);

}  // namespace bt::parquet
