#include "parquet/metadata.h"

#include "common/error.h"
#include "parquet/thrift_compact.h"

namespace bt::parquet {

const char* type_name(Type t) {
  static const char* names[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
                                "FIXED_LEN_BYTE_ARRAY"};
  auto i = static_cast<uint32_t>(t);
  return i < 8 ? names[i] : "unknown type";
}
const char* codec_name(Codec c) {
  static const char* names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
  auto i = static_cast<uint32_t>(c);
  return i < 8 ? names[i] : "unknown codec";
}
const char* encoding_name(Encoding e) {
  static const char* names[] = {"PLAIN", "(1)", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED", "DELTA_BINARY_PACKED",
                                "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY", "RLE_DICTIONARY",
                                "BYTE_STREAM_SPLIT"};
  auto i = static_cast<uint32_t>(e);
  return i < 10 ? names[i] : "unknown encoding";
}

namespace {

template <class E>
E read_enum(CompactReader& r, TType t) {
  return static_cast<E>(r.read_i32(t));
}

SchemaElement read_schema_element(CompactReader& r) {
  SchemaElement e;
  r.begin_struct();
  int16_t id;
  TType t;
  while (r.next_field(id, t)) {
    switch (id) {
      case 1: e.type = read_enum<Type>(r, t); e.has_type = true; break;
      case 3: e.repetition = read_enum<Repetition>(r, t); break;
      case 4: e.name = r.read_string(t); break;
      case 5: e.num_children = r.read_i32(t); break;
      case 6: e.converted_type = r.read_i32(t); break;
      case 10: {
        // LogicalType is a union of empty-ish structs: remember which member is set.
        if (t != TType::Struct) fail("thrift: logicalType is not a struct");
        r.begin_struct();
        int16_t lid;
        TType lt;
        while (r.next_field(lid, lt)) {
          e.logical_type = lid;
          r.skip(lt);
        }
        break;
      }
      default: r.skip(t);
    }
  }
  return e;
}

ColumnMetaData read_column_meta(CompactReader& r) {
  ColumnMetaData m;
  r.begin_struct();
  int16_t id;
  TType t;
  while (r.next_field(id, t)) {
    switch (id) {
      case 1: m.type = read_enum<Type>(r, t); break;
      case 2: {
        TType et;
        size_t n = r.read_list(t, et);
        for (size_t i = 0; i < n; ++i) m.encodings.push_back(static_cast<Encoding>(r.read_i32_elem()));
        break;
      }
      case 3: {
        TType et;
        size_t n = r.read_list(t, et);
        if (et != TType::Binary) fail("thrift: path_in_schema is not a list of strings");
        for (size_t i = 0; i < n; ++i) m.path_in_schema.push_back(r.read_string_elem());
        break;
      }
      case 4: m.codec = read_enum<Codec>(r, t); break;
      case 5: m.num_values = r.read_i64(t); break;
      case 6: m.total_uncompressed_size = r.read_i64(t); break;
      case 7: m.total_compressed_size = r.read_i64(t); break;
      case 9: m.data_page_offset = r.read_i64(t); break;
      case 11: m.dictionary_page_offset = r.read_i64(t); break;
      default: r.skip(t);
    }
  }
  return m;
}

ColumnChunk read_column_chunk(CompactReader& r) {
  ColumnChunk c;
  r.begin_struct();
  int16_t id;
  TType t;
  while (r.next_field(id, t)) {
    if (id == 1) {
      c.file_path = r.read_string(t);
    } else if (id == 3) {
      if (t != TType::Struct) fail("thrift: meta_data is not a struct");
      c.meta = read_column_meta(r);
      c.has_meta_data = true;
    } else {
      r.skip(t);
    }
  }
  return c;
}

RowGroup read_row_group(CompactReader& r) {
  RowGroup g;
  r.begin_struct();
  int16_t id;
  TType t;
  while (r.next_field(id, t)) {
    if (id == 1) {
      TType et;
      size_t n = r.read_list(t, et);
      if (et != TType::Struct) fail("thrift: row group columns are not structs");
      g.columns.reserve(n);
      for (size_t i = 0; i < n; ++i) g.columns.push_back(read_column_chunk(r));
    } else if (id == 3) {
      g.num_rows = r.read_i64(t);
    } else {
      r.skip(t);
    }
  }
  return g;
}

}  // namespace

FileMetaData parse_file_metadata(const uint8_t* data, size_t size) {
  CompactReader r(data, size);
  FileMetaData md;
  r.begin_struct();
  int16_t id;
  TType t;
  while (r.next_field(id, t)) {
    switch (id) {
      case 1: md.version = r.read_i32(t); break;
      case 2: {
        TType et;
        size_t n = r.read_list(t, et);
        if (et != TType::Struct) fail("thrift: schema is not a list of structs");
        md.schema.reserve(n);
        for (size_t i = 0; i < n; ++i) md.schema.push_back(read_schema_element(r));
        break;
      }
      case 3: md.num_rows = r.read_i64(t); break;
      case 4: {
        TType et;
        size_t n = r.read_list(t, et);
        if (et != TType::Struct) fail("thrift: row_groups is not a list of structs");
        md.row_groups.reserve(n);
        for (size_t i = 0; i < n; ++i) md.row_groups.push_back(read_row_group(r));
        break;
      }
      case 6: md.created_by = r.read_string(t); break;
      default: r.skip(t);
    }
  }
  return md;
}

PageHeader parse_page_header(const uint8_t* data, size_t size, size_t* header_size) {
  CompactReader r(data, size);
  PageHeader h;
  r.begin_struct();
  int16_t id;
  TType t;
  auto sub = [&](auto&& field) {
    if (t != TType::Struct) fail("thrift: page sub-header is not a struct");
    r.begin_struct();
    int16_t sid;
    TType st;
    while (r.next_field(sid, st))
      if (!field(sid, st)) r.skip(st);
    h.has_page_header = true;
  };
  while (r.next_field(id, t)) {
    switch (id) {
      case 1: h.type = read_enum<PageType>(r, t); break;
      case 2: h.uncompressed_page_size = r.read_i32(t); break;
      case 3: h.compressed_page_size = r.read_i32(t); break;
      case 5:  // DataPageHeader
        sub([&](int16_t sid, TType st) {
          switch (sid) {
            case 1: h.num_values = r.read_i32(st); return true;
            case 2: h.encoding = read_enum<Encoding>(r, st); return true;
            case 3: h.definition_level_encoding = read_enum<Encoding>(r, st); return true;
            case 4: h.repetition_level_encoding = read_enum<Encoding>(r, st); return true;
            default: return false;
          }
        });
        break;
      case 7:  // DictionaryPageHeader
        sub([&](int16_t sid, TType st) {
          switch (sid) {
            case 1: h.num_values = r.read_i32(st); return true;
            case 2: h.encoding = read_enum<Encoding>(r, st); return true;
            default: return false;
          }
        });
        break;
      case 8:  // DataPageHeaderV2
        sub([&](int16_t sid, TType st) {
          switch (sid) {
            case 1: h.num_values = r.read_i32(st); return true;
            case 2: h.num_nulls = r.read_i32(st); return true;
            case 3: h.num_rows = r.read_i32(st); return true;
            case 4: h.encoding = read_enum<Encoding>(r, st); return true;
            case 5: h.definition_levels_byte_length = r.read_i32(st); return true;
            case 6: h.repetition_levels_byte_length = r.read_i32(st); return true;
            case 7: h.is_compressed = r.read_bool(st); return true;
            default: return false;
          }
        });
        break;
      default: r.skip(t);
    }
  }
  *header_size = r.position();
  return h;
}

}  // namespace bt::parquet
