// torch.save's zip checkpoints (pytorch_model.bin), libtorch-free.
//
// Layout: a zip archive of stored (uncompressed) entries <prefix>/data.pkl (the state dict pickle, read by
// torch_pickle.h), <prefix>/data/<key> (one per storage, raw little-endian elements) and small files such as
// <prefix>/version and <prefix>/byteorder; <prefix> is any single folder name (the file's stem when it was
// written). The archive is mmap'd read-only: a tensor's bytes are read in place, and release() hands a storage's
// pages back to the kernel once it has been copied, so loading never holds more than the model plus the storages
// being copied. Every offset and size is validated against the file; errors are one bt::Error naming the file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/torch_pickle.h"

namespace bt::checkpoint {

struct ZipEntry {
  std::string name;
  uint64_t data_offset = 0;  // of the entry's bytes in the archive
  uint64_t size = 0;
};

// The central directory of an in-memory zip archive (zip64 included). Only stored (method 0) entries are
// accepted, each inside the archive. `what` names the source in errors.
std::vector<ZipEntry> read_zip_directory(const uint8_t* data, size_t size, std::string_view what);

// A tensor of the checkpoint: its record plus where its storage lies in the mapping.
struct StoredTensor {
  TensorRecord rec;
  const uint8_t* storage = nullptr;  // the storage's first byte (element 0, not rec.storage_offset)
  uint64_t storage_bytes = 0;
  size_t storage_id = 0;             // tensors sharing a storage share this id
};

class TorchCheckpoint {
 public:
  static TorchCheckpoint open(const std::string& path);
  // Parse an in-memory archive (not copied; `bytes` must outlive the result).
  static TorchCheckpoint parse(const uint8_t* bytes, size_t size, std::string_view what);
  TorchCheckpoint(TorchCheckpoint&&) noexcept;
  TorchCheckpoint& operator=(TorchCheckpoint&&) noexcept;
  ~TorchCheckpoint();

  const std::vector<StoredTensor>& tensors() const { return tensors_; }
  const std::string& source() const { return source_; }
  // Drops the pages of storage `storage_id` from this process (it stays readable: pages come back from the
  // file if touched again). A no-op for in-memory archives.
  void release(size_t storage_id) const;

 private:
  TorchCheckpoint() = default;
  struct Mapping;
  std::unique_ptr<Mapping> mapping_;
  std::string source_;
  std::vector<StoredTensor> tensors_;
  std::vector<std::pair<const uint8_t*, uint64_t>> storages_;
};

}  // namespace bt::checkpoint
