#include "checkpoint/torch_zip.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_set>
#include <map>

#include "common/error.h"
#include "common/file_gate.h"
#include "common/terminal.h"

namespace bt::checkpoint {
namespace {

constexpr uint32_t kEocd = 0x06054b50, kEocd64 = 0x06064b50, kLocator64 = 0x07064b50, kCentral = 0x02014b50,
                   kLocal = 0x04034b50;

// Bounds-checked little-endian reads of the archive.
struct Bytes {
  const uint8_t* p;
  size_t n;
  std::string_view what;
  uint64_t le(uint64_t off, int k) const {
    if (off > n || static_cast<uint64_t>(k) > n - off) bt::fail(what, ": truncated zip archive (a record runs past the end)");
    uint64_t v = 0;
    for (int j = 0; j < k; ++j) v |= static_cast<uint64_t>(p[off + j]) << (8 * j);
    return v;
  }
};

struct Directory {
  uint64_t entries = 0, offset = 0, size = 0;
};

Directory find_directory(const Bytes& b) {
  if (b.n < 22) bt::fail(b.what, ": not a zip archive (too short; a truncated download?)");
  // The end record sits in the last 22 + 65535 (comment) bytes.
  uint64_t lo = b.n > 22 + 65535 ? b.n - 22 - 65535 : 0;
  for (uint64_t at = b.n - 22 + 1; at-- > lo;) {
    if (b.le(at, 4) != kEocd) continue;
    Directory d{b.le(at + 10, 2), b.le(at + 16, 4), b.le(at + 12, 4)};
    if (d.entries != 0xFFFF && d.offset != 0xFFFFFFFF && d.size != 0xFFFFFFFF) return d;
    if (at < 20 || b.le(at - 20, 4) != kLocator64) bt::fail(b.what, ": zip64 archive without its locator");
    uint64_t e64 = b.le(at - 20 + 8, 8);
    if (b.le(e64, 4) != kEocd64) bt::fail(b.what, ": zip64 end record not where its locator points");
    return {b.le(e64 + 32, 8), b.le(e64 + 48, 8), b.le(e64 + 40, 8)};
  }
  bt::fail(b.what, ": not a zip archive or truncated (no end-of-central-directory record)");
}

// Zip64 extra field (id 1): 8-byte values for those of (size, compressed size, local offset) stored as 0xFFFFFFFF.
void apply_zip64(const Bytes& b, uint64_t extra, uint64_t len, uint64_t* usize, uint64_t* csize, uint64_t* local) {
  for (uint64_t at = extra; at + 4 <= extra + len;) {
    uint64_t id = b.le(at, 2), sz = b.le(at + 2, 2), q = at + 4;
    if (id == 1) {
      for (uint64_t* v : {usize, csize, local})
        if (*v == 0xFFFFFFFF) {
          if (q + 8 > at + 4 + sz) bt::fail(b.what, ": malformed zip64 extra field");
          *v = b.le(q, 8);
          q += 8;
        }
    }
    at += 4 + sz;
  }
}

}  // namespace

std::vector<ZipEntry> read_zip_directory(const uint8_t* data, size_t size, std::string_view what) {
  Bytes b{data, size, what};
  Directory d = find_directory(b);
  if (d.offset > size || d.size > size - d.offset || d.entries > d.size / 46)
    bt::fail(what, ": zip central directory lies outside the file (truncated?)");
  std::vector<ZipEntry> out;
  std::unordered_set<std::string> names;  // torch.load takes the first of two same-named entries, a map the last
  uint64_t at = d.offset;
  for (uint64_t k = 0; k < d.entries; ++k) {
    if (b.le(at, 4) != kCentral) bt::fail(what, ": corrupt zip central directory (entry ", k, ")");
    uint64_t method = b.le(at + 10, 2), csize = b.le(at + 20, 4), usize = b.le(at + 24, 4);
    uint64_t nlen = b.le(at + 28, 2), elen = b.le(at + 30, 2), clen = b.le(at + 32, 2), local = b.le(at + 42, 4);
    if (46 + nlen + elen + clen > size - at) bt::fail(what, ": truncated zip central directory");
    ZipEntry e;
    e.name.assign(reinterpret_cast<const char*>(data + at + 46), nlen);
    apply_zip64(b, at + 46 + nlen, elen, &usize, &csize, &local);
    if (method != 0)
      bt::fail(what, ": zip entry '", e.name, "' is compressed (method ", method,
               "); torch.save stores entries uncompressed, so this is not a torch checkpoint");
    if (csize != usize) bt::fail(what, ": zip entry '", e.name, "' has inconsistent sizes");
    if (b.le(local, 4) != kLocal) bt::fail(what, ": zip entry '", e.name, "' has no local header (truncated?)");
    e.data_offset = local + 30 + b.le(local + 26, 2) + b.le(local + 28, 2);
    e.size = usize;
    if (e.data_offset > size || e.size > size - e.data_offset)
      bt::fail(what, ": zip entry '", e.name, "' runs past the end of the file (truncated download?)");
    if (!names.insert(e.name).second)
      bt::fail(what, ": zip entry '", bt::printable(e.name.substr(0, 200)), "' appears twice (a tampered archive)");
    out.push_back(std::move(e));
    at += 46 + nlen + elen + clen;
  }
  return out;
}

struct TorchCheckpoint::Mapping {
  void* addr = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (addr) ::munmap(addr, size);
  }
};

TorchCheckpoint::TorchCheckpoint(TorchCheckpoint&&) noexcept = default;
TorchCheckpoint& TorchCheckpoint::operator=(TorchCheckpoint&&) noexcept = default;
TorchCheckpoint::~TorchCheckpoint() = default;

TorchCheckpoint TorchCheckpoint::open(const std::string& path) {
  uint64_t file_size = 0;
  const int fd = bt::open_regular_file(path, UINT64_MAX, &file_size);  // a FIFO or device: refused, never read
  if (file_size == 0) {
    ::close(fd);
    bt::fail(path, ": empty file");
  }
  auto m = std::make_unique<Mapping>();
  m->size = static_cast<size_t>(file_size);
  void* a = ::mmap(nullptr, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (a == MAP_FAILED) bt::fail(path, ": cannot mmap (", std::strerror(errno), ")");
  m->addr = a;
  TorchCheckpoint c = parse(static_cast<const uint8_t*>(a), m->size, path);
  c.mapping_ = std::move(m);
  return c;
}

TorchCheckpoint TorchCheckpoint::parse(const uint8_t* bytes, size_t size, std::string_view what) {
  if (size >= 2 && bytes[0] == 0x80 && bytes[1] <= 5)
    bt::fail(what, ": legacy torch.save format (torch < 1.6); re-save it with a newer torch, or as safetensors");
  TorchCheckpoint c;
  c.source_ = what;
  std::map<std::string, const ZipEntry*> by_name;
  auto entries = read_zip_directory(bytes, size, what);
  const ZipEntry* pkl = nullptr;
  std::string prefix;
  for (const auto& e : entries) {
    by_name[e.name] = &e;
    size_t slash = e.name.find('/');
    if (slash != std::string::npos && e.name.substr(slash + 1) == "data.pkl") {
      if (pkl) bt::fail(what, ": the archive holds two data.pkl entries");
      pkl = &e;
      prefix = e.name.substr(0, slash + 1);
    }
  }
  if (!pkl) bt::fail(what, ": no <folder>/data.pkl in the archive (not a torch.save checkpoint)");
  if (auto it = by_name.find(prefix + "byteorder"); it != by_name.end()) {
    std::string_view order(reinterpret_cast<const char*>(bytes + it->second->data_offset), it->second->size);
    if (order != "little") bt::fail(what, ": byteorder is '", order, "'; only little-endian checkpoints are read");
  }
  std::map<std::string, size_t> storage_ids;
  for (auto& rec : unpickle_state_dict(bytes + pkl->data_offset, pkl->size, what)) {
    auto it = by_name.find(prefix + "data/" + rec.storage_key);
    if (it == by_name.end())
      bt::fail(what, ": tensor '", rec.name, "' names storage '", rec.storage_key, "', which the archive lacks");
    const ZipEntry& e = *it->second;
    uint64_t need = required_storage_bytes(rec, what);
    if (need > e.size)
      bt::fail(what, ": tensor '", rec.name, "' needs ", need, " bytes of its storage, which holds only ", e.size,
               " (corrupt or truncated checkpoint)");
    auto [sid, fresh] = storage_ids.emplace(rec.storage_key, c.storages_.size());
    if (fresh) c.storages_.emplace_back(bytes + e.data_offset, e.size);
    c.tensors_.push_back({std::move(rec), bytes + e.data_offset, e.size, sid->second});
  }
  return c;
}

void TorchCheckpoint::release(size_t storage_id) const {
  if (!mapping_ || storage_id >= storages_.size()) return;
  // Only whole pages inside the storage: neighbours may still be needed.
  const long page = ::sysconf(_SC_PAGESIZE);
  auto begin = reinterpret_cast<uintptr_t>(storages_[storage_id].first);
  uintptr_t end = begin + storages_[storage_id].second;
  begin = (begin + page - 1) / page * page;
  end = end / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace bt::checkpoint
