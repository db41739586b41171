#include "parquet/column_chunk.h"

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "parquet/decompress.h"
#include "parquet/rle.h"

namespace bt::parquet {
namespace {

struct View {
  const uint8_t* p;
  uint32_t n;
};

// Values of one page (or of the dictionary), before they are scattered to rows.
struct Decoded {
  std::vector<View> views;     // BYTE_ARRAY
  std::vector<int64_t> ints;   // the others
  size_t size(Type t) const { return t == Type::ByteArray ? views.size() : ints.size(); }
};

uint32_t load_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

void check_type(Type t) {
  if (t != Type::Boolean && t != Type::Int32 && t != Type::Int64 && t != Type::ByteArray)
    fail("physical type ", type_name(t), " is not supported (BOOLEAN, INT32, INT64, BYTE_ARRAY are)");
}

void decode_plain(Type t, const uint8_t* p, size_t n, size_t count, Decoded& out) {
  switch (t) {
    case Type::ByteArray: {
      out.views.reserve(out.views.size() + count);
      size_t pos = 0;
      for (size_t i = 0; i < count; ++i) {
        if (n - pos < 4) fail("PLAIN byte array ", i, " of ", count, ": length past the end of the page");
        uint32_t len = load_u32(p + pos);
        pos += 4;
        if (len > n - pos) fail("PLAIN byte array ", i, " of ", len, " bytes runs past the end of the page");
        out.views.push_back({p + pos, len});
        pos += len;
      }
      return;
    }
    case Type::Int32:
    case Type::Int64: {
      size_t w = t == Type::Int32 ? 4 : 8;
      if (count > n / w) fail("PLAIN page holds ", n / w, " values, ", count, " expected");
      out.ints.reserve(out.ints.size() + count);
      for (size_t i = 0; i < count; ++i) {
        if (w == 4) {
          out.ints.push_back(static_cast<int32_t>(load_u32(p + 4 * i)));
        } else {
          uint64_t v = uint64_t(load_u32(p + 8 * i)) | uint64_t(load_u32(p + 8 * i + 4)) << 32;
          out.ints.push_back(static_cast<int64_t>(v));
        }
      }
      return;
    }
    case Type::Boolean: {
      if (count > n * 8) fail("PLAIN boolean page holds ", n * 8, " values, ", count, " expected");
      for (size_t i = 0; i < count; ++i) out.ints.push_back((p[i >> 3] >> (i & 7)) & 1);
      return;
    }
    default:
      check_type(t);
  }
}

void decode_values(Type t, Encoding enc, const uint8_t* p, size_t n, size_t count, const Decoded* dict,
                   std::vector<uint32_t>& scratch, Decoded& out) {
  switch (enc) {
    case Encoding::Plain:
      return decode_plain(t, p, n, count, out);
    case Encoding::PlainDictionary:
    case Encoding::RleDictionary: {
      if (!dict) fail(encoding_name(enc), " data page without a dictionary page");
      if (count == 0) return;
      if (n < 1) fail("dictionary-encoded page without a bit width");
      RleDecoder d(p + 1, n - 1, p[0]);
      scratch.resize(count);
      d.decode(scratch.data(), count);
      size_t dn = dict->size(t);
      for (uint32_t idx : scratch)
        if (idx >= dn) fail("dictionary index ", idx, " out of range (dictionary has ", dn, " values)");
      if (t == Type::ByteArray) {
        for (uint32_t idx : scratch) out.views.push_back(dict->views[idx]);
      } else {
        for (uint32_t idx : scratch) out.ints.push_back(dict->ints[idx]);
      }
      return;
    }
    case Encoding::Rle: {
      if (t != Type::Boolean) fail("RLE value encoding for ", type_name(t), " (only BOOLEAN may use it)");
      if (n < 4) fail("RLE boolean page without a length");
      uint32_t len = load_u32(p);
      if (len > n - 4) fail("RLE boolean run of ", len, " bytes past the end of the page");
      RleDecoder d(p + 4, len, 1);
      scratch.resize(count);
      d.decode(scratch.data(), count);
      for (uint32_t v : scratch) out.ints.push_back(v & 1);
      return;
    }
    default:
      fail("value encoding ", encoding_name(enc), " is not supported (PLAIN, dictionary and RLE are)");
  }
}

[[noreturn]] void values_over_budget(uint64_t cap) {
  fail("values decode to more than ", cap, " bytes, more than the chunk's size can justify (",
       kMaxValueBytesPerChunkByte, " bytes per chunk byte, at least ", kMinValueBudget >> 20,
       " MiB): a dictionary page repeated past any real column's size (the file is corrupt or hostile)");
}

// Appends one value slot (definition level d; the next decoded value when present) to the output arrays; a
// BYTE_ARRAY value is copied only while the values stay within `cap` bytes (dictionary indices let a few bytes
// repeat a large dictionary value).
void append_value(Type t, uint32_t d, bool present, const Decoded& vals, size_t& k, uint64_t cap, ColumnValues& out) {
  out.def.push_back(static_cast<uint8_t>(d));
  out.present.push_back(present);
  if (t == Type::ByteArray) {
    if (present) {
      const View& v = vals.views[k++];
      if (v.n > cap - out.data.size()) values_over_budget(cap);
      out.data.insert(out.data.end(), v.p, v.p + v.n);
    }
    out.offsets.push_back(out.data.size());
  } else {
    out.ints.push_back(present ? vals.ints[k++] : 0);
  }
}

// Scatters one page's values to its rows.
void append_rows(Type t, int max_def, const std::vector<uint32_t>& defs, size_t nv, const Decoded& vals,
                 uint64_t cap, ColumnValues& out) {
  size_t k = 0;
  for (size_t i = 0; i < nv; ++i) {
    const uint32_t d = max_def ? defs[i] : 0;
    append_value(t, d, static_cast<int>(d) == max_def, vals, k, cap, out);
  }
}


// A data page's level and value sections (v1: length-prefixed RLE levels inside the decompressed body;
// v2: uncompressed levels before the possibly compressed values). Values point into `buf` or the chunk.
struct PageLevels {
  const uint8_t* rep = nullptr;
  size_t rep_len = 0;
  const uint8_t* def = nullptr;
  size_t def_len = 0;
  const uint8_t* values = nullptr;
  size_t values_len = 0;
};

// Takes one length-prefixed RLE level section off the front of a v1 page.
void take_v1_levels(const uint8_t*& p, size_t& n, const char* what, Encoding enc, const uint8_t*& levels,
                    size_t& len) {
  if (enc != Encoding::Rle) fail(what, " level encoding ", encoding_name(enc), " is not supported");
  if (n < 4) fail(what, " levels without a length");
  len = load_u32(p);
  if (len > n - 4) fail(what, " levels of ", len, " bytes past the page end");
  levels = p + 4;
  p += 4 + len;
  n -= 4 + len;
}

PageLevels split_levels(const PageHeader& h, const LeafColumn& leaf, const uint8_t* body, size_t csize, size_t usize,
                        Codec codec, std::vector<uint8_t>& buf) {
  PageLevels lv;
  if (h.type == PageType::DataPage) {
    buf.resize(usize);
    decompress(codec, body, csize, buf.data(), usize);
    const uint8_t* p = buf.data();
    size_t n = usize;
    // v1 pages carry the repetition levels' encoding in the same field family; parquet writers use RLE.
    if (leaf.max_rep > 0) take_v1_levels(p, n, "repetition", Encoding::Rle, lv.rep, lv.rep_len);
    if (leaf.max_def > 0) take_v1_levels(p, n, "definition", h.definition_level_encoding, lv.def, lv.def_len);
    lv.values = p;
    lv.values_len = n;
    return lv;
  }
  if (h.definition_levels_byte_length < 0 || h.repetition_levels_byte_length < 0) fail("negative level lengths");
  const size_t rl = static_cast<size_t>(h.repetition_levels_byte_length);
  const size_t dl = static_cast<size_t>(h.definition_levels_byte_length);
  if (rl > csize || dl > csize - rl || rl + dl > usize)
    fail("level lengths ", rl, "+", dl, " exceed the page (", csize, " bytes)");
  if (leaf.max_rep == 0 && h.num_rows != h.num_values) fail("v2 page has ", h.num_rows, " rows but ", h.num_values, " values");
  lv.rep = body, lv.rep_len = rl;
  lv.def = body + rl, lv.def_len = dl;
  const size_t vc = csize - rl - dl, vu = usize - rl - dl;
  buf.resize(vu);
  decompress(h.is_compressed ? codec : Codec::Uncompressed, body + rl + dl, vc, buf.data(), vu);
  lv.values = buf.data();
  lv.values_len = vu;
  return lv;
}

void decode_levels(const uint8_t* p, size_t n, int bits, size_t count, int max, const char* what,
                   std::vector<uint32_t>& out) {
  out.resize(count);
  RleDecoder d(p, n, bits);
  d.decode(out.data(), count);
  for (uint32_t v : out)
    if (v > static_cast<uint32_t>(max)) fail(what, " level ", v, " exceeds the column's maximum ", max);
}

// Lists (max_rep 1): each value with repetition level 0 starts a row; definition level max_def is an element,
// max_def - 1 a null element, and anything lower an empty or null list (no element). Returns rows started.
size_t append_list_rows(const LeafColumn& leaf, const std::vector<uint32_t>& reps, const std::vector<uint32_t>& defs,
                        size_t nv, const Decoded& vals, size_t rows_left, uint64_t cap, ColumnValues& out) {
  size_t started = 0, k = 0;
  const uint32_t max_def = static_cast<uint32_t>(leaf.max_def);
  for (size_t i = 0; i < nv; ++i) {
    if (reps[i] == 0) {
      if (started == rows_left) fail("more lists than the row group's rows");
      out.list_begin.push_back(out.present.size());
      ++started;
    } else if (out.list_begin.empty()) {
      fail("the first value continues a list (repetition level ", reps[i], ")");
    }
    const uint32_t d = max_def ? defs[i] : 0;
    if (d + 1 < max_def) continue;  // an empty or null list: no element
    append_value(leaf.type, d, d == max_def, vals, k, cap, out);
  }
  return started;
}

// The chunk's claims checked against the schema and its own size; returns the row count.
size_t check_chunk(size_t size, const LeafColumn& leaf, const ColumnMetaData& meta, int64_t num_rows) {
  const Type t = leaf.type;
  check_type(t);
  if (leaf.max_rep > 1) fail("column is a list of lists; only flat, struct and list columns can be read");
  if (leaf.max_def > 32) fail("definition level ", leaf.max_def, " is too deep");
  if (meta.type != t) fail("chunk type ", type_name(meta.type), " differs from the schema's ", type_name(t));
  if (num_rows < 0) fail("negative row count");
  if (leaf.max_rep == 0 && meta.num_values != num_rows)
    fail("chunk holds ", meta.num_values, " values for ", num_rows, " rows");
  if (meta.num_values < num_rows) fail("chunk holds ", meta.num_values, " values for ", num_rows, " rows");
  const size_t rows = static_cast<size_t>(num_rows);
  // RLE lets a few bytes claim millions of null rows; beyond kMaxRowsPerChunkByte the count is treated as
  // corrupt, which bounds memory by the chunk's size (real all-null chunks of >1M rows in a selected column
  // are not expected).
  if (rows > std::max<size_t>(size_t(1) << 20, size * kMaxRowsPerChunkByte))
    fail("row count ", rows, " is implausible for a chunk of ", size, " bytes");
  const size_t values_total = static_cast<size_t>(meta.num_values);
  if (values_total > std::max<size_t>(size_t(1) << 20, size * kMaxRowsPerChunkByte))
    fail("value count ", values_total, " is implausible for a chunk of ", size, " bytes");
  return rows;
}

// `reuse` emptied (its buffers kept) and sized for `rows` rows of the leaf's type.
ColumnValues reset_output(ColumnValues reuse, const LeafColumn& leaf, size_t rows, size_t size) {
  const Type t = leaf.type;
  ColumnValues out = std::move(reuse);
  out.def.clear();
  out.present.clear();
  out.offsets.clear();
  out.data.clear();
  out.ints.clear();
  out.list_begin.clear();
  out.type = t;
  out.num_rows = rows;
  if (leaf.max_rep > 0) out.list_begin.reserve(std::min<size_t>(rows, size * 64 + 64) + 1);
  // Reserve only what the chunk's size can justify: the row count is untrusted.
  const size_t plausible = std::min<size_t>(rows, size * 64 + 64);
  out.def.reserve(plausible);
  out.present.reserve(plausible);
  if (t == Type::ByteArray) {
    out.offsets.reserve(plausible + 1);
    out.offsets.push_back(0);
  } else {
    out.ints.reserve(plausible);
  }
  return out;
}

// ByteArray columns: one exact allocation for all values, from a pass over the page headers (growing and
// page-faulting an image column's buffer page by page costs more than decoding it); never beyond `cap`.
void reserve_byte_array_data(const uint8_t* chunk, size_t size, uint64_t cap, ColumnValues& out) {
  size_t total = 0;
  for (size_t pos = 0; pos < size;) {
    size_t hlen = 0;
    PageHeader h;
    try {
      h = parse_page_header(chunk + pos, size - pos, &hlen);
    } catch (const Error&) {
      break;  // the decoding pass below reports it with the page number
    }
    if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0 ||
        static_cast<size_t>(h.compressed_page_size) > size - pos - hlen)
      break;
    if (h.type == PageType::DataPage || h.type == PageType::DataPageV2)
      total += std::min(static_cast<size_t>(h.uncompressed_page_size),
                        max_uncompressed_size(static_cast<size_t>(h.compressed_page_size)));
    pos += hlen + static_cast<size_t>(h.compressed_page_size);
  }
  total = std::min<uint64_t>(total, cap);
  // A recycled buffer that must grow grows with headroom, so the next slightly larger page fits too.
  if (total > out.data.capacity()) out.data.reserve(out.data.capacity() ? total + total / 8 : total);
}

}  // namespace

ColumnValues decode_column_chunk(const uint8_t* chunk, size_t size, const LeafColumn& leaf,
                                 const ColumnMetaData& meta, int64_t num_rows, ColumnValues reuse,
                                 uint64_t max_value_bytes) {
  const Type t = leaf.type;
  const size_t rows = check_chunk(size, leaf, meta, num_rows);
  const size_t values_total = static_cast<size_t>(meta.num_values);
  const uint64_t cap = std::min(max_value_bytes, value_budget(size));
  ColumnValues out = reset_output(std::move(reuse), leaf, rows, size);
  if (t == Type::ByteArray) reserve_byte_array_data(chunk, size, cap, out);

  const int level_bits = bit_width_for(static_cast<uint32_t>(leaf.max_def));
  const int rep_bits = bit_width_for(static_cast<uint32_t>(leaf.max_rep));
  Decoded dict, vals;
  bool have_dict = false;
  // Page scratch, reused across calls of this thread so big pages do not fault in fresh memory every time.
  // dict's views point into dict_buf, vals' into buf.
  static thread_local std::vector<uint8_t> dict_buf, buf;
  std::vector<uint32_t> defs, reps, scratch;
  size_t pos = 0, done = 0, values_done = 0, page = 0;
  // Flat columns: one value per row. Lists: rows start where the repetition level is 0; a row is complete
  // when the next one starts or the chunk ends, so the loop runs until every value is read.
  while (leaf.max_rep == 0 ? done < rows : values_done < values_total) {
    if (pos >= size) fail("chunk ends after ", done, " of ", rows, " rows");
    size_t hlen = 0;
    PageHeader h = parse_page_header(chunk + pos, size - pos, &hlen);
    pos += hlen;
    ++page;
    if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0) fail("page ", page, ": negative size");
    const size_t csize = static_cast<size_t>(h.compressed_page_size);
    const size_t usize = static_cast<size_t>(h.uncompressed_page_size);
    if (csize > size - pos) fail("page ", page, ": ", csize, " bytes run past the end of the chunk");
    const uint8_t* body = chunk + pos;
    pos += csize;
    if (h.type != PageType::DataPage && h.type != PageType::DataPageV2 && h.type != PageType::DictionaryPage)
      continue;  // index pages and unknown page types carry no values
    if (!h.has_page_header) fail("page ", page, ": header lacks its data/dictionary sub-header");
    if (h.num_values < 0) fail("page ", page, ": negative value count");
    const size_t nv = static_cast<size_t>(h.num_values);
    if (usize > max_uncompressed_size(csize)) fail("page ", page, ": implausible uncompressed size ", usize);

    try {
      if (h.type == PageType::DictionaryPage) {
        if (have_dict) fail("a second dictionary page");
        if (h.encoding != Encoding::Plain && h.encoding != Encoding::PlainDictionary)
          fail("dictionary encoding ", encoding_name(h.encoding), " is not supported");
        dict_buf.resize(usize);
        decompress(meta.codec, body, csize, dict_buf.data(), usize);
        decode_plain(t, dict_buf.data(), dict_buf.size(), nv, dict);
        have_dict = true;
        continue;
      }
      if (leaf.max_rep == 0 && nv > rows - done) fail(nv, " values, but only ", rows - done, " rows remain in the row group");
      if (nv > values_total - values_done) fail(nv, " values, but only ", values_total - values_done, " remain in the chunk");
      PageLevels lv = split_levels(h, leaf, body, csize, usize, meta.codec, buf);
      if (leaf.max_rep > 0) decode_levels(lv.rep, lv.rep_len, rep_bits, nv, leaf.max_rep, "repetition", reps);
      size_t present = nv;
      if (leaf.max_def > 0) {
        decode_levels(lv.def, lv.def_len, level_bits, nv, leaf.max_def, "definition", defs);
        present = size_t(std::count(defs.begin(), defs.end(), static_cast<uint32_t>(leaf.max_def)));
      }
      vals.views.clear();
      vals.ints.clear();
      decode_values(t, h.encoding, lv.values, lv.values_len, present, have_dict ? &dict : nullptr, scratch, vals);
      if (leaf.max_rep > 0) {
        done += append_list_rows(leaf, reps, defs, nv, vals, rows - done, cap, out);
      } else {
        append_rows(t, leaf.max_def, defs, nv, vals, cap, out);
        done += nv;
      }
      values_done += nv;
    } catch (const Error& e) {
      fail("page ", page, ": ", e.what());
    }
  }
  if (done != rows) fail("chunk holds ", done, " rows, the row group ", rows);
  if (leaf.max_rep > 0) out.list_begin.push_back(out.present.size());
  return out;
}

}  // namespace bt::parquet
