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

// The decoded metadata's estimated size, charged as elements are decoded (see kMaxFooterMemory).
struct Budget {
  size_t used = 0;
  void charge(size_t bytes) {
    used += bytes;
    if (used > kMaxFooterMemory)
      fail("thrift: footer decodes to more than ", kMaxFooterMemory >> 20,
           " MiB of metadata (real footers take KBs; the file is corrupt)");
  }
};

// A list header whose count is checked against a hard cap (on top of the reader's remaining-bytes check).
size_t read_capped_list(CompactReader& r, TType t, TType& elem, size_t cap, const char* what) {
  size_t n = r.read_list(t, elem);
  if (n > cap) fail("thrift: ", n, " ", what, ", more than the limit of ", cap);
  return n;
}

template <class E>
E read_enum(CompactReader& r, TType t) {
  return static_cast<E>(r.read_i32(t));
}

SchemaElement read_schema_element(CompactReader& r, Budget& b) {
  SchemaElement e;
  r.begin_struct();
  int16_t id;
  TType t;
  while (r.next_field(id, t)) {
    switch (id) {
      case 1: e.type = read_enum<Type>(r, t); e.has_type = true; break;
      case 3: e.repetition = read_enum<Repetition>(r, t); break;
      case 4: e.name = r.read_string(t); b.charge(e.name.size()); break;
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

ColumnMetaData read_column_meta(CompactReader& r, Budget& b) {
  ColumnMetaData m;
  r.begin_struct();
  int16_t id;
  TType t;
  while (r.next_field(id, t)) {
    switch (id) {
      case 1: m.type = read_enum<Type>(r, t); break;
      case 2: {
        TType et;
        size_t n = read_capped_list(r, t, et, kMaxListPerColumn, "encodings in a column chunk");
        b.charge(n * sizeof(Encoding));
        for (size_t i = 0; i < n; ++i) m.encodings.push_back(static_cast<Encoding>(r.read_i32_elem()));
        break;
      }
      case 3: {
        TType et;
        size_t n = read_capped_list(r, t, et, kMaxListPerColumn, "path_in_schema parts");
        if (et != TType::Binary) fail("thrift: path_in_schema is not a list of strings");
        for (size_t i = 0; i < n; ++i) {
          m.path_in_schema.push_back(r.read_string_elem());
          b.charge(sizeof(std::string) + m.path_in_schema.back().size());
        }
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

ColumnChunk read_column_chunk(CompactReader& r, Budget& b) {
  ColumnChunk c;
  r.begin_struct();
  int16_t id;
  TType t;
  while (r.next_field(id, t)) {
    if (id == 1) {
      c.file_path = r.read_string(t);
      b.charge(c.file_path.size());
    } else if (id == 3) {
      if (t != TType::Struct) fail("thrift: meta_data is not a struct");
      c.meta = read_column_meta(r, b);
      c.has_meta_data = true;
    } else {
      r.skip(t);
    }
  }
  return c;
}

RowGroup read_row_group(CompactReader& r, Budget& b) {
  RowGroup g;
  r.begin_struct();
  int16_t id;
  TType t;
  while (r.next_field(id, t)) {
    if (id == 1) {
      TType et;
      size_t n = read_capped_list(r, t, et, kMaxColumnsPerRowGroup, "column chunks in a row group");
      if (et != TType::Struct) fail("thrift: row group columns are not structs");
      for (size_t i = 0; i < n; ++i) {
        b.charge(sizeof(ColumnChunk));
        g.columns.push_back(read_column_chunk(r, b));
      }
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
  if (size > kMaxFooterBytes) fail("thrift: footer of ", size, " bytes, more than the limit of ", kMaxFooterBytes);
  CompactReader r(data, size);
  Budget b;
  FileMetaData md;
  r.begin_struct();
  int16_t id;
  TType t;
  while (r.next_field(id, t)) {
    switch (id) {
      case 1: md.version = r.read_i32(t); break;
      case 2: {
        TType et;
        size_t n = read_capped_list(r, t, et, kMaxSchemaElements, "schema elements");
        if (et != TType::Struct) fail("thrift: schema is not a list of structs");
        for (size_t i = 0; i < n; ++i) {
          b.charge(sizeof(SchemaElement));
          md.schema.push_back(read_schema_element(r, b));
        }
        break;
      }
      case 3: md.num_rows = r.read_i64(t); break;
      case 4: {
        TType et;
        size_t n = read_capped_list(r, t, et, kMaxRowGroups, "row groups");
        if (et != TType::Struct) fail("thrift: row_groups is not a list of structs");
        for (size_t i = 0; i < n; ++i) {
          b.charge(sizeof(RowGroup));
          md.row_groups.push_back(read_row_group(r, b));
        }
        break;
      }
      case 6: md.created_by = r.read_string(t); b.charge(md.created_by.size()); break;
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
