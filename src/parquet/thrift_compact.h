// A bounds-checked reader of the Thrift compact protocol, just enough for parquet's footer and page headers.
// Untrusted input: every varint, length and list size is checked against the remaining bytes, nesting is
// limited, and any violation throws bt::Error("thrift: ...").
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bt::parquet {

enum class TType : uint8_t {
  Stop = 0, True = 1, False = 2, Byte = 3, I16 = 4, I32 = 5, I64 = 6, Double = 7, Binary = 8, List = 9,
  Set = 10, Map = 11, Struct = 12,
};

class CompactReader {
 public:
  CompactReader(const uint8_t* data, size_t size) : p_(data), end_(data + size), begin_(data) {}
  size_t position() const { return static_cast<size_t>(p_ - begin_); }

  // Struct traversal: begin_struct(); while (next_field(id, type)) { read or skip(type) } (end is implicit).
  void begin_struct();
  bool next_field(int16_t& id, TType& type);
  void skip(TType type);

  // Typed reads of a field of wire type `type`; a type mismatch throws.
  int32_t read_i32(TType type);
  int64_t read_i64(TType type);
  bool read_bool(TType type);
  std::string read_string(TType type);
  // A list header; returns the element count (checked against the remaining bytes).
  size_t read_list(TType type, TType& elem);
  // List elements.
  int32_t read_i32_elem() { return static_cast<int32_t>(zigzag(read_uvarint())); }
  std::string read_string_elem();

 private:
  uint64_t read_uvarint();
  static int64_t zigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }
  uint8_t byte();
  void skip_depth(TType type, int depth);
  static void expect(TType got, TType want, const char* what);

  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* begin_;
  std::vector<int16_t> last_id_;  // one per open struct
};

}  // namespace bt::parquet
