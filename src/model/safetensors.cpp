#include "model/safetensors.h"

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

#include "common/error.h"
#include "common/file_gate.h"
#include "common/json.h"

namespace bt::st {

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

// The safetensors spec caps the header at 100 MB; anything larger is corrupt or hostile.
constexpr uint64_t kMaxHeader = 100u << 20;
constexpr int kMaxDepth = 8;

// nlohmann's DOM can recurse on deeply nested input; a valid header nests at most 3 levels.
bool nesting_ok(std::string_view s) {
  int depth = 0;
  bool in_str = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_str) {
      if (c == '\\') ++i;
      else if (c == '"') in_str = false;
    } else if (c == '"') {
      in_str = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxDepth) return false;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return true;
}

bool get_u64(const nlohmann::json& j, uint64_t* out) {
  if (j.is_number_unsigned()) {
    *out = j.get<uint64_t>();
    return true;
  }
  if (j.is_number_integer()) {
    int64_t v = j.get<int64_t>();
    if (v < 0) return false;
    *out = static_cast<uint64_t>(v);
    return true;
  }
  return false;
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
  if (n > kMaxHeader) bad("header length ", n, " exceeds the 100 MB limit");
  if (n > size - 8) bad("header length ", n, " exceeds the file size ", size);
  std::string_view text(reinterpret_cast<const char*>(bytes + 8), n);
  if (!nesting_ok(text)) bad("header JSON nests deeper than ", kMaxDepth, " levels");
  nlohmann::json h = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (h.is_discarded()) bad("header is not well-formed JSON");
  if (!h.is_object()) bad("header is not a JSON object");
  const uint8_t* data = bytes + 8 + n;
  const uint64_t data_size = size - 8 - n;

  struct Span {
    uint64_t b, e;
    size_t idx;
  };
  std::vector<Span> spans;
  for (auto it = h.begin(); it != h.end(); ++it) {
    const std::string& name = it.key();
    const auto& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) bad("__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) bad("__metadata__ value of '", m.key(), "' is not a string");
        out.metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    if (!v.is_object()) bad("entry '", name, "' is not an object");
    auto dt = v.find("dtype");
    auto sh = v.find("shape");
    auto off = v.find("data_offsets");
    if (dt == v.end() || sh == v.end() || off == v.end())
      bad("entry '", name, "' lacks dtype, shape or data_offsets");
    TensorView t;
    t.name = name;
    if (!dt->is_string() || !parse_dtype(dt->get<std::string>(), &t.dtype))
      bad("entry '", name, "' has unsupported dtype ", dt->dump());
    if (!sh->is_array() || sh->size() > 16) bad("entry '", name, "' has a bad shape ", sh->dump());
    uint64_t numel = 1;
    bool overflow = false;
    for (const auto& d : *sh) {
      uint64_t s = 0;
      if (!get_u64(d, &s) || s > (uint64_t(1) << 48)) bad("entry '", name, "' has a bad shape ", sh->dump());
      if (s != 0 && numel > std::numeric_limits<uint64_t>::max() / s) overflow = true;
      numel *= s;
      t.shape.push_back(static_cast<int64_t>(s));
    }
    uint64_t b = 0, e = 0;
    if (!off->is_array() || off->size() != 2 || !get_u64((*off)[0], &b) || !get_u64((*off)[1], &e) || b > e)
      bad("entry '", name, "' has bad data_offsets ", off->dump());
    if (e > data_size) bad("entry '", name, "' data_offsets [", b, ", ", e, "] exceed the data size ", data_size);
    const uint64_t es = dtype_size(t.dtype);
    if (overflow || numel > std::numeric_limits<uint64_t>::max() / es || numel * es != e - b)
      bad("entry '", name, "' spans ", e - b, " bytes but its shape ", sh->dump(), " x ", dtype_name(t.dtype),
          " needs a different size");
    t.data = data + b;
    t.nbytes = static_cast<size_t>(e - b);
    spans.push_back({b, e, out.tensors_.size()});
    out.index_[name] = out.tensors_.size();
    out.tensors_.push_back(std::move(t));
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

void write_file_atomic(const std::string& path, const std::vector<std::string_view>& chunks) {
  std::string tmp = bt::str(path, ".tmp.", getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) bt::fail(path, ": cannot create ", tmp, " (", std::strerror(errno), ")");
  auto fail_io = [&](const char* what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    bt::fail(path, ": ", what, " failed (", std::strerror(err), ")");
  };
  for (auto c : chunks) {
    const char* p = c.data();
    size_t left = c.size();
    while (left > 0) {
      ssize_t w = ::write(fd, p, left);
      if (w < 0) {
        if (errno == EINTR) continue;
        fail_io("write");
      }
      p += w;
      left -= static_cast<size_t>(w);
    }
  }
  if (::fsync(fd) != 0) fail_io("fsync");
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    bt::fail(path, ": close failed (", std::strerror(errno), ")");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    bt::fail(path, ": rename from ", tmp, " failed (", std::strerror(err), ")");
  }
  // Make the rename itself durable.
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  if (dir.empty()) dir = "/";
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
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
  write_file_atomic(path, chunks);
}

std::map<std::string, std::string> read_safetensors_index(const std::string& path) {
  std::string text = bt::read_small_file(path);
  if (!nesting_ok(text)) bt::fail(path, ": index JSON nests too deeply");
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

}  // namespace bt::st
