// Random-access bytes of one parquet file: a file read with pread (thread-safe, never loaded whole) or a
// memory buffer (tests, the fuzzer). read() throws bt::Error naming the source when the range is out of bounds
// or the read fails.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bt::parquet {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Reads exactly n bytes at offset into dst; thread-safe.
  virtual void read(uint64_t offset, size_t n, uint8_t* dst) const = 0;
  // For error messages: the file name (or "<memory>").
  virtual const std::string& name() const = 0;
};

std::shared_ptr<const ByteSource> open_file_source(const std::string& path);
// Copies the bytes; `name` is used in error messages.
std::shared_ptr<const ByteSource> memory_source(const uint8_t* data, size_t n, std::string name = "<memory>");

}  // namespace bt::parquet
