// The one gate for files a user or a folder names (configs, indexes, tokenizers, checkpoints, shards, images):
// opened non-blocking and close-on-exec, so a FIFO cannot hang the open; checked on the open descriptor (no race
// with a rename) to be a regular file, so /dev/zero or a folder is refused instead of read forever; and read only
// within a size cap per kind of file. Errors are bt::Error "PATH: why", never quoting the file's contents.
#pragma once
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"

namespace bt {

// Caps per kind of file (a file over its cap is an error naming the cap).
inline constexpr uint64_t kMaxJsonBytes = 64ull << 20;   // config/index/state/card JSON, tokenizer files
inline constexpr uint64_t kMaxLogBytes = 1ull << 30;     // a run's metrics.jsonl read back on resume

// Why a file cannot be read as data, or "" when it can.
inline std::string not_regular(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "is a folder, not a file";
  if (S_ISFIFO(st.st_mode)) return "is a FIFO, not a regular file";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "is a device, not a regular file";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}

// The one open for reading in src/ (scripts/check_file_opens.py): non-blocking, so a FIFO cannot hang it.
// -1 with errno when the path cannot be opened.
inline int open_nonblocking(const std::string& path) { return ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC); }

// Opens `path` for reading and returns the descriptor (blocking again, for plain reads and mmap); *size gets its
// size. Throws "PATH: why" for a missing, non-regular or larger-than-`max_bytes` file.
inline int open_regular_file(const std::string& path, uint64_t max_bytes = UINT64_MAX, uint64_t* size = nullptr) {
  const int fd = open_nonblocking(path);
  if (fd < 0) fail(path, ": cannot open (", std::strerror(errno), ")");
  struct stat st {};
  std::string why = fstat(fd, &st) != 0 ? std::string(std::strerror(errno)) : not_regular(st);
  if (why.empty() && uint64_t(st.st_size) > max_bytes)
    why = str(st.st_size, " bytes, more than the limit of ", max_bytes, " bytes for this kind of file");
  if (why.empty() && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) why = std::strerror(errno);
  if (!why.empty()) {
    ::close(fd);
    fail(path, ": ", why);
  }
  if (size) *size = uint64_t(st.st_size);
  return fd;
}

// A descriptor on `path` only to fsync it (never read): non-blocking, so a FIFO in its place cannot hang the
// open; fsync then fails with EINVAL, which callers tolerate. -1 with errno when it cannot be opened.
inline int open_to_fsync(const std::string& path) { return open_nonblocking(path); }

// Reads the regular file open as fd into bytes, at most `cap` bytes (a file that grows while read stops one
// byte past the cap). Returns "" or why not.
inline std::string read_all(int fd, std::vector<uint8_t>& bytes, uint64_t cap) {
  struct stat st;
  if (fstat(fd, &st) != 0) return std::strerror(errno);
  if (std::string why = not_regular(st); !why.empty()) return why;
  if (uint64_t(st.st_size) > cap) return str(st.st_size, " bytes, more than the limit of ", cap, " bytes");
  bytes.resize(size_t(st.st_size) + 1);  // one spare byte lets the EOF read land without growing the buffer
  size_t got = 0;
  for (;;) {
    if (got == bytes.size()) {
      if (got > cap) return str("more than the limit of ", cap, " bytes (the file grew while read)");
      bytes.resize(size_t(std::min<uint64_t>(got + 65536, cap + 1)));
    }
    const ssize_t r = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return std::strerror(errno);
    }
    if (r == 0) break;
    got += size_t(r);
  }
  if (got > cap) return str("more than the limit of ", cap, " bytes (the file grew while read)");
  bytes.resize(got);
  return "";
}

// The whole regular file at `path`, within `max_bytes`: "" or why not (without the path; for callers that name
// the file their own way, e.g. the loader's per-sample errors).
inline std::string try_read_regular_file(const std::string& path, std::vector<uint8_t>& bytes, uint64_t max_bytes) {
  const int fd = open_nonblocking(path);
  if (fd < 0) return std::strerror(errno);
  const std::string why = read_all(fd, bytes, max_bytes);  // checks on the descriptor: regular, within the cap
  ::close(fd);
  return why;
}

inline void read_regular_file(const std::string& path, std::vector<uint8_t>& bytes, uint64_t max_bytes) {
  const int fd = open_nonblocking(path);
  if (fd < 0) fail(path, ": cannot open (", std::strerror(errno), ")");
  const std::string why = read_all(fd, bytes, max_bytes);
  ::close(fd);
  if (!why.empty()) fail(path, ": ", why);
}

// A small text file (JSON, a hub ref, a dataset card) as a string.
inline std::string read_small_file(const std::string& path, uint64_t max_bytes = kMaxJsonBytes) {
  std::vector<uint8_t> b;
  read_regular_file(path, b, max_bytes);
  return std::string(b.begin(), b.end());
}

}  // namespace bt
