// Random-access view of tar shards (see tar_dataset.h).
#include "data/tar_dataset.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/file_gate.h"
#include "common/terminal.h"

namespace bt::data {

namespace {

// Reads exactly n bytes at off; returns false on a short read, sets errno on failure.
bool pread_all(int fd, uint8_t* dst, size_t n, uint64_t off) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, dst + got, n - got, off_t(off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) errno = 0;
    if (r <= 0) return false;
    got += size_t(r);
  }
  return true;
}

}  // namespace

std::unique_ptr<TarDataset> TarDataset::open(const std::vector<std::string>& shards, const ShardOptions& opts) {
  if (shards.size() >= UINT32_MAX) fail("too many shards");
  std::unique_ptr<TarDataset> ds(new TarDataset());
  ds->shards_ = shards;
  ShardOptions io = opts;
  io.index_only = true;
  std::vector<uint8_t> check;
  for (uint32_t s = 0; s < shards.size(); ++s) {
    const std::string& path = shards[s];
    auto reader = ShardReader::open_file(path, io);
    const int fd = reader->fd();  // -1 when it could not be opened: next() then reports why
    TarSample t;
    while (reader->next(t)) {
      // The offset comes from header positions; confirm it against the bytes libarchive returned.
      check.resize(t.image.size());
      if (fd < 0 || !pread_all(fd, check.data(), check.size(), t.image_offset) || check != t.image)
        fail(path, ": cannot index member offsets of sample '", clip_name(t.key), "' (not a plain tar?)");
      ds->rows_.push_back({std::move(t.key), std::move(t.caption), t.image_offset, t.image_size, s});
    }
    ds->bad_.merge(reader->bad());
  }
  if (ds->rows_.empty()) fail(shards.empty() ? std::string("no shards") : shards[0], ": no usable samples in ",
                              shards.size(), " shard(s)");
  return ds;
}

void TarDataset::read_image(size_t i, std::vector<uint8_t>& bytes) const {
  const Row& r = rows_.at(i);
  const std::string& path = shards_[r.shard];
  int fd = -1;
  try {
    fd = open_regular_file(path);  // a shard replaced by a FIFO since indexing must not hang a worker
  } catch (const Error& e) {
    fail(r.key, ": ", e.what());
  }
  bytes.resize(r.size);
  bool ok = pread_all(fd, bytes.data(), r.size, r.offset);
  int err = errno;
  ::close(fd);
  if (!ok) fail(r.key, ": short read of the image (", err ? std::strerror(err) : "file changed since indexing?", ")");
}

std::string TarDataset::describe(size_t i) const { return rows_.at(i).key; }

std::unique_ptr<TarDataset> open_tar_dataset(const std::string& pattern, const ShardOptions& opts) {
  return TarDataset::open(expand_shard_pattern(pattern), opts);
}

}  // namespace bt::data
