#include "checkpoint/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/file_gate.h"
#include "common/json.h"

namespace bt::checkpoint {

// What the header parser fills: the SafeTensors' members and the data section entries point into.
struct SafeTensorsParts {
  const uint8_t* data;
  uint64_t data_size;
  std::vector<TensorView>& tensors;
  std::map<std::string, size_t>& index;
  std::map<std::string, std::string>& metadata;
};

namespace {

struct DTypeInfo {
  DType d;
  const char* name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F64, "F64", 8}, {DType::F32, "F32", 4}, {DType::F16, "F16", 2},   {DType::BF16, "BF16", 2},
    {DType::I64, "I64", 8}, {DType::I32, "I32", 4}, {DType::I16, "I16", 2},   {DType::I8, "I8", 1},
    {DType::U8, "U8", 1},   {DType::BOOL, "BOOL", 1},
};

// The spec allows 100 MB of header; real headers take KBs (a few hundred tensors, ~100 bytes each) and the largest
// checkpoints a few MB. 16 MiB bounds what a header can cost while parsed (about 8 bytes per header byte, with no
// DOM: see HeaderParser) and still holds ~150,000 tensors.
constexpr uint64_t kMaxHeader = uint64_t(16) << 20;
constexpr int kMaxDepth = 8;  // a valid header nests 3 levels
constexpr size_t kMaxMetadataEntries = 4096;  // "__metadata__" holds {"format": "pt"} and a few more

// A non-negative integer JSON value, as SAX events give it.
struct JsonNumber {
  bool ok = false;
  uint64_t v = 0;
};

// Streams the header's JSON (nlohmann's SAX interface) straight into TensorViews: a DOM would take ~20x the
// header (a 30 MB header of {} entries took 1.24 GB) before the first entry could be refused. Depth is limited as
// the project's JSON entry point does (common/json.h); every entry is checked as soon as it closes; unknown keys
// inside an entry are skipped without being stored. `bad` throws.
template <class Bad>
class HeaderParser {
 public:
  HeaderParser(const Bad& bad, SafeTensorsParts& out) : bad_(bad), out_(out) {}
  using json = nlohmann::json;
  bool null() { return scalar("null", {}); }
  bool boolean(bool) { return scalar("a boolean", {}); }
  bool number_integer(json::number_integer_t v) { return scalar("a number", {v >= 0, static_cast<uint64_t>(v)}); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar("a number", {true, v}); }
  bool number_float(json::number_float_t, const std::string&) { return scalar("a number", {}); }
  bool binary(json::binary_t&) { return scalar("binary", {}); }
  bool string(std::string& v) {
    if (not_object_) return true;
    if (depth_ == 2 && in_meta_) {
      if (out_.metadata.size() >= kMaxMetadataEntries)
        bad_("__metadata__ holds more than ", kMaxMetadataEntries, " entries");
      out_.metadata[key_] = std::move(v);
      return true;
    }
    if (depth_ == 2 && field_ == Field::Dtype && !parse_dtype(v, &cur_.dtype))
      bad_("entry '", cur_.name, "' has unsupported dtype '", v.substr(0, 20), "'");
    if (depth_ == 2 && field_ == Field::Dtype) have_dtype_ = true;
    return scalar("a string", {});
  }
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool key(std::string& k) {
    if (not_object_) return true;
    if (depth_ == 1) {
      key_ = std::move(k);
      in_meta_ = key_ == "__metadata__";
    } else if (depth_ == 2 && in_meta_) {
      key_ = std::move(k);  // the metadata key ("__metadata__" itself is remembered by in_meta_)
    } else if (depth_ == 2) {
      field_ = k == "dtype" ? Field::Dtype : k == "shape" ? Field::Shape : k == "data_offsets" ? Field::Offsets
                                                                                           : Field::Other;
    }
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool not_object() const { return not_object_; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    bad_("header is not well-formed JSON");
    return false;
  }

 private:
  enum class Field { None, Dtype, Shape, Offsets, Other };

  bool open(bool object) {
    if (++depth_ > kMaxDepth) bad_("header JSON nests deeper than ", kMaxDepth, " levels");
    if (depth_ == 1 && !object) not_object_ = true;  // reported after the parse, so nesting is checked first
    if (not_object_) return true;
    if (depth_ == 2 && in_meta_ && !object) bad_("__metadata__ is not an object");
    if (depth_ == 2 && !in_meta_) {
      if (!object) bad_("entry '", key_, "' is not an object");
      begin_entry();
    }
    if (depth_ == 3 && in_meta_) bad_("__metadata__ value of '", key_, "' is not a string");
    if (depth_ == 3 && (field_ == Field::Shape || field_ == Field::Offsets) && object) field_bad();
    if (depth_ >= 3 && field_ == Field::Dtype) field_bad();
    if (depth_ >= 4 && (field_ == Field::Shape || field_ == Field::Offsets)) field_bad();
    return true;
  }
  bool close() {
    if (not_object_) {
      --depth_;
      return true;
    }
    if (depth_ == 3 && field_ == Field::Shape) have_shape_ = true;
    if (depth_ == 3 && field_ == Field::Offsets) {
      if (offsets_.size() != 2) field_bad();
      have_offsets_ = true;
    }
    if (depth_ == 2 && !in_meta_) end_entry();
    if (depth_ == 2) in_meta_ = false;
    --depth_;
    return true;
  }
  bool scalar(const char* what, JsonNumber n) {
    if (depth_ == 0) bad_("header is not a JSON object");
    if (not_object_) return true;
    if (depth_ == 1 && in_meta_) bad_("__metadata__ is not an object");
    if (depth_ == 1) bad_("entry '", key_, "' is not an object");
    if (depth_ == 2 && in_meta_) bad_("__metadata__ value of '", key_, "' is not a string");
    if (depth_ == 2 && (field_ == Field::Shape || field_ == Field::Offsets)) field_bad();
    if (depth_ == 2 && field_ == Field::Dtype && std::string_view(what) != "a string") field_bad();
    if (depth_ == 3 && field_ == Field::Shape) {
      if (!n.ok || n.v > (uint64_t(1) << 48) || cur_.shape.size() >= 16) field_bad();
      cur_.shape.push_back(static_cast<int64_t>(n.v));
    }
    if (depth_ == 3 && field_ == Field::Offsets) {
      if (!n.ok || offsets_.size() >= 2) field_bad();
      offsets_.push_back(n.v);
    }
    return true;
  }
  void field_bad() {  // throws (bad_ always does)
    if (field_ == Field::Dtype) bad_("entry '", cur_.name, "' has unsupported dtype (not a string)");
    if (field_ == Field::Shape) bad_("entry '", cur_.name, "' has a bad shape (at most 16 sizes, each 0..2^48)");
    bad_("entry '", cur_.name, "' has bad data_offsets (expected [begin, end])");
  }
  void begin_entry() {
    cur_ = TensorView{};
    cur_.name = key_;
    offsets_.clear();
    have_dtype_ = have_shape_ = have_offsets_ = false;
    field_ = Field::None;
  }
  void end_entry();

  const Bad& bad_;
  SafeTensorsParts& out_;
  int depth_ = 0;
  bool not_object_ = false;
  std::string key_;
  bool in_meta_ = false;
  Field field_ = Field::None;
  TensorView cur_;
  std::vector<uint64_t> offsets_;
  bool have_dtype_ = false, have_shape_ = false, have_offsets_ = false;
};

template <class Bad>
void HeaderParser<Bad>::end_entry() {
  const std::string& name = cur_.name;
  if (!have_dtype_ || !have_shape_ || !have_offsets_) bad_("entry '", name, "' lacks dtype, shape or data_offsets");
  const uint64_t b = offsets_[0], e = offsets_[1];
  if (b > e) bad_("entry '", name, "' has bad data_offsets [", b, ", ", e, "]");
  if (e > out_.data_size) bad_("entry '", name, "' data_offsets [", b, ", ", e, "] exceed the data size ", out_.data_size);
  uint64_t numel = 1;
  bool overflow = false;
  for (int64_t d : cur_.shape) {
    const uint64_t s = static_cast<uint64_t>(d);
    if (s != 0 && numel > std::numeric_limits<uint64_t>::max() / s) overflow = true;
    numel *= s;
  }
  const uint64_t es = dtype_size(cur_.dtype);
  if (overflow || numel > std::numeric_limits<uint64_t>::max() / es || numel * es != e - b)
    bad_("entry '", name, "' spans ", e - b, " bytes but its shape x ", dtype_name(cur_.dtype), " needs a different size");
  if (!out_.index.emplace(name, out_.tensors.size()).second) bad_("tensor '", name, "' is named twice");
  cur_.data = out_.data + b;
  cur_.nbytes = static_cast<size_t>(e - b);
  out_.tensors.push_back(std::move(cur_));
}

}  // namespace

std::string_view dtype_name(DType d) {
  for (const auto& i : kDTypes)
    if (i.d == d) return i.name;
  return "?";
}

size_t dtype_size(DType d) {
  for (const auto& i : kDTypes)
    if (i.d == d) return i.size;
  return 0;
}

bool parse_dtype(std::string_view name, DType* out) {
  for (const auto& i : kDTypes)
    if (name == i.name) {
      *out = i.d;
      return true;
    }
  return false;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

struct SafeTensors::Mapping {
  void* addr = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (addr && size) munmap(addr, size);
  }
};

SafeTensors::SafeTensors(SafeTensors&&) noexcept = default;
SafeTensors& SafeTensors::operator=(SafeTensors&&) noexcept = default;
SafeTensors::~SafeTensors() = default;

const TensorView* SafeTensors::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

SafeTensors SafeTensors::parse(const uint8_t* bytes, size_t size, std::string_view what) {
  SafeTensors out;
  out.source_ = std::string(what);
  auto bad = [&](const auto&... a) { bt::fail("safetensors ", what, ": ", a..., " (file is corrupt or not safetensors)"); };
  if (size < 8) bad("file is ", size, " bytes, shorter than the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
  if (n > kMaxHeader)
    bad("header length ", n, " exceeds the limit of ", kMaxHeader, " bytes (real headers take KBs to a few MB)");
  if (n > size - 8) bad("header length ", n, " exceeds the file size ", size);
  std::string_view text(reinterpret_cast<const char*>(bytes + 8), n);
  SafeTensorsParts parts{bytes + 8 + n, size - 8 - n, out.tensors_, out.index_, out.metadata_};
  HeaderParser<decltype(bad)> sax(bad, parts);
  if (!nlohmann::json::sax_parse(text.begin(), text.end(), &sax)) bad("header is not well-formed JSON");
  if (sax.not_object()) bad("header is not a JSON object");

  struct Span {
    uint64_t b, e;
    size_t idx;
  };
  std::vector<Span> spans;
  spans.reserve(out.tensors_.size());
  for (size_t k = 0; k < out.tensors_.size(); ++k) {
    const uint64_t b = static_cast<uint64_t>(out.tensors_[k].data - parts.data);
    spans.push_back({b, b + out.tensors_[k].nbytes, k});
  }
  std::sort(spans.begin(), spans.end(), [](const Span& x, const Span& y) { return x.b != y.b ? x.b < y.b : x.e < y.e; });
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].b < spans[i - 1].e)
      bad("tensors '", out.tensors_[spans[i - 1].idx].name, "' and '", out.tensors_[spans[i].idx].name,
          "' overlap");
  return out;
}

SafeTensors SafeTensors::open(const std::string& path) {
  uint64_t file_size = 0;
  const int fd = bt::open_regular_file(path, UINT64_MAX, &file_size);  // a FIFO or device: refused, never read
  auto m = std::make_unique<Mapping>();
  m->size = static_cast<size_t>(file_size);
  if (m->size > 0) {
    m->addr = mmap(nullptr, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m->addr == MAP_FAILED) {
      m->addr = nullptr;
      ::close(fd);
      bt::fail("safetensors ", path, ": mmap failed (", std::strerror(errno), ")");
    }
  }
  ::close(fd);
  static const uint8_t kEmpty[1] = {0};
  const uint8_t* base = m->addr ? static_cast<const uint8_t*>(m->addr) : kEmpty;
  SafeTensors out = parse(base, m->size, path);
  out.mapping_ = std::move(m);
  return out;
}

void write_safetensors(const std::string& path, const std::vector<TensorOut>& tensors,
                       std::map<std::string, std::string> metadata) {
  if (!metadata.count("format")) metadata["format"] = "pt";
  nlohmann::ordered_json h;
  h["__metadata__"] = metadata;
  uint64_t off = 0;
  for (const auto& t : tensors) {
    if (t.name == "__metadata__" || t.name.empty()) bt::fail(path, ": invalid tensor name '", t.name, "'");
    if (h.contains(t.name)) bt::fail(path, ": duplicate tensor name '", t.name, "'");
    uint64_t numel = 1;
    for (auto s : t.shape) {
      if (s < 0) bt::fail(path, ": tensor '", t.name, "' has a negative dimension");
      numel *= static_cast<uint64_t>(s);
    }
    if (numel * dtype_size(t.dtype) != t.nbytes)
      bt::fail(path, ": tensor '", t.name, "' has ", t.nbytes, " bytes, its shape needs ", numel * dtype_size(t.dtype));
    h[t.name] = {{"dtype", std::string(dtype_name(t.dtype))}, {"shape", t.shape}, {"data_offsets", {off, off + t.nbytes}}};
    off += t.nbytes;
  }
  std::string header = h.dump();
  header.append((8 - header.size() % 8) % 8, ' ');
  char len[8];
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  std::vector<std::string_view> chunks{std::string_view(len, 8), header};
  for (const auto& t : tensors)
    if (t.nbytes) chunks.emplace_back(static_cast<const char*>(t.data), t.nbytes);
  bt::write_file_atomic(path, chunks);
}

std::map<std::string, std::string> read_safetensors_index(const std::string& path) {
  std::string text = bt::read_small_file(path);
  auto j = bt::parse_json_text(text, path);
  if (!j.is_object()) bt::fail(path, ": not a JSON object");
  auto wm = j.find("weight_map");
  if (wm == j.end() || !wm->is_object()) bt::fail(path, ": lacks a \"weight_map\" object");
  std::map<std::string, std::string> out;
  for (auto it = wm->begin(); it != wm->end(); ++it) {
    if (!it.value().is_string()) bt::fail(path, ": weight_map entry '", it.key(), "' is not a string");
    std::string file = it.value().get<std::string>();
    if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..")
      bt::fail(path, ": weight_map entry '", it.key(), "' names a bad shard file '", file, "'");
    out[it.key()] = file;
  }
  return out;
}

}  // namespace bt::checkpoint
