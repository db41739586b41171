#include "parquet/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/file_gate.h"

namespace bt::parquet {
namespace {

void check_range(const std::string& name, uint64_t size, uint64_t offset, size_t n) {
  if (offset > size || n > size - offset)
    fail(name, ": read of ", n, " bytes at offset ", offset, " is past the end of the file (", size, " bytes)");
}

class FileSource final : public ByteSource {
 public:
  explicit FileSource(std::string path) : path_(std::move(path)) {
    fd_ = open_regular_file(path_, UINT64_MAX, &size_);  // a FIFO or device: refused, never read
  }
  ~FileSource() override { ::close(fd_); }
  uint64_t size() const override { return size_; }
  const std::string& name() const override { return path_; }
  void read(uint64_t offset, size_t n, uint8_t* dst) const override {
    check_range(path_, size_, offset, n);
    while (n > 0) {
      ssize_t got = ::pread(fd_, dst, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail(path_, ": read at offset ", offset, ": ", std::strerror(errno));
      if (got == 0) fail(path_, ": file shrank while reading (offset ", offset, ")");
      dst += got;
      offset += static_cast<uint64_t>(got);
      n -= static_cast<size_t>(got);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

class MemorySource final : public ByteSource {
 public:
  MemorySource(const uint8_t* p, size_t n, std::string name) : bytes_(p, p + n), name_(std::move(name)) {}
  uint64_t size() const override { return bytes_.size(); }
  const std::string& name() const override { return name_; }
  void read(uint64_t offset, size_t n, uint8_t* dst) const override {
    check_range(name_, bytes_.size(), offset, n);
    if (n) std::memcpy(dst, bytes_.data() + offset, n);
  }

 private:
  std::vector<uint8_t> bytes_;
  std::string name_;
};

}  // namespace

std::shared_ptr<const ByteSource> open_file_source(const std::string& path) {
  return std::make_shared<FileSource>(path);
}
std::shared_ptr<const ByteSource> memory_source(const uint8_t* data, size_t n, std::string name) {
  return std::make_shared<MemorySource>(data, n, std::move(name));
}

}  // namespace bt::parquet
