#include "parquet/thrift_compact.h"

#include "common/error.h"

namespace bt::parquet {
namespace {
constexpr size_t kMaxDepth = 64;
}

uint8_t CompactReader::byte() {
  if (p_ >= end_) fail("thrift: truncated data at byte ", position());
  return *p_++;
}

uint64_t CompactReader::read_uvarint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b = byte();
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  fail("thrift: varint longer than 10 bytes at byte ", position());
}

void CompactReader::expect(TType got, TType want, const char* what) {
  if (got != want)
    fail("thrift: field of wire type ", int(got), " where ", what, " (type ", int(want), ") was expected");
}

void CompactReader::begin_struct() {
  if (last_id_.size() >= kMaxDepth) fail("thrift: structs nested deeper than ", kMaxDepth);
  last_id_.push_back(0);
}

bool CompactReader::next_field(int16_t& id, TType& type) {
  if (last_id_.empty()) fail("thrift: next_field outside a struct");
  uint8_t h = byte();
  if (h == 0) {
    last_id_.pop_back();
    return false;
  }
  type = static_cast<TType>(h & 0x0f);
  if (type > TType::Struct) fail("thrift: bad wire type ", int(h & 0x0f), " at byte ", position() - 1);
  int delta = h >> 4;
  if (delta) {
    id = static_cast<int16_t>(last_id_.back() + delta);
  } else {
    int64_t v = zigzag(read_uvarint());
    if (v < INT16_MIN || v > INT16_MAX) fail("thrift: field id out of range");
    id = static_cast<int16_t>(v);
  }
  last_id_.back() = id;
  return true;
}

int32_t CompactReader::read_i32(TType type) {
  if (type != TType::I32 && type != TType::I16 && type != TType::Byte) expect(type, TType::I32, "i32");
  if (type == TType::Byte) return static_cast<int8_t>(byte());
  int64_t v = zigzag(read_uvarint());
  if (v < INT32_MIN || v > INT32_MAX) fail("thrift: i32 out of range");
  return static_cast<int32_t>(v);
}

int64_t CompactReader::read_i64(TType type) {
  if (type == TType::I32 || type == TType::I16 || type == TType::Byte) return read_i32(type);
  expect(type, TType::I64, "i64");
  return zigzag(read_uvarint());
}

bool CompactReader::read_bool(TType type) {
  if (type == TType::True) return true;
  if (type == TType::False) return false;
  fail("thrift: field of wire type ", int(type), " where a bool was expected");
}

std::string CompactReader::read_string_elem() {
  uint64_t n = read_uvarint();
  if (n > static_cast<uint64_t>(end_ - p_)) fail("thrift: string of ", n, " bytes past the end of the data");
  std::string s(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
  p_ += n;
  return s;
}

std::string CompactReader::read_string(TType type) {
  expect(type, TType::Binary, "string");
  return read_string_elem();
}

size_t CompactReader::read_list(TType type, TType& elem) {
  if (type != TType::Set) expect(type, TType::List, "list");
  uint8_t h = byte();
  elem = static_cast<TType>(h & 0x0f);
  if (elem > TType::Struct || elem == TType::Stop) fail("thrift: bad list element type ", int(h & 0x0f));
  uint64_t n = h >> 4;
  if (n == 15) n = read_uvarint();
  // Every element takes at least one byte, so a count beyond the remaining bytes is corrupt.
  if (n > static_cast<uint64_t>(end_ - p_)) fail("thrift: list of ", n, " elements past the end of the data");
  return static_cast<size_t>(n);
}

void CompactReader::skip(TType type) { skip_depth(type, 0); }

void CompactReader::skip_depth(TType type, int depth) {
  if (depth + last_id_.size() > kMaxDepth) fail("thrift: values nested deeper than ", kMaxDepth);
  switch (type) {
    case TType::True:
    case TType::False:
      return;  // a struct field's bool lives in its header
    case TType::Byte:
      byte();
      return;
    case TType::I16:
    case TType::I32:
    case TType::I64:
      read_uvarint();
      return;
    case TType::Double:
      if (end_ - p_ < 8) fail("thrift: truncated double");
      p_ += 8;
      return;
    case TType::Binary:
      read_string_elem();
      return;
    case TType::List:
    case TType::Set: {
      TType elem;
      size_t n = read_list(TType::List, elem);
      for (size_t i = 0; i < n; ++i) {
        if (elem == TType::True || elem == TType::False) byte();  // list bools take one byte each
        else skip_depth(elem, depth + 1);
      }
      return;
    }
    case TType::Map: {
      uint64_t n = read_uvarint();
      if (n == 0) return;
      if (n > static_cast<uint64_t>(end_ - p_)) fail("thrift: map of ", n, " entries past the end of the data");
      uint8_t kv = byte();
      TType k = static_cast<TType>(kv >> 4), v = static_cast<TType>(kv & 0x0f);
      if (k > TType::Struct || v > TType::Struct || k == TType::Stop || v == TType::Stop)
        fail("thrift: bad map types");
      for (uint64_t i = 0; i < n; ++i) {
        for (TType t : {k, v}) {
          if (t == TType::True || t == TType::False) byte();
          else skip_depth(t, depth + 1);
        }
      }
      return;
    }
    case TType::Struct: {
      begin_struct();
      int16_t id;
      TType t;
      while (next_field(id, t)) skip_depth(t, depth + 1);
      return;
    }
    case TType::Stop:
      break;
  }
  fail("thrift: cannot skip wire type ", int(type));
}

}  // namespace bt::parquet
