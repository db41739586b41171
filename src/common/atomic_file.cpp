#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/file_gate.h"

namespace bt {

namespace fs = std::filesystem;

namespace {

// fsync and close fd, opened by the caller on p.
void fsync_fd(int fd, const fs::path& p) {
  if (fd < 0) fail(p.string(), ": cannot open for fsync: ", std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // EINVAL: the file system has no fsync for this kind of file (some do not sync folders); nothing to wait for.
  if (rc != 0 && err != EINVAL) fail(p.string(), ": fsync failed: ", std::strerror(err));
}

// Writes every chunk to fd; false (errno set) on a failed write.
bool write_all(int fd, const std::vector<std::string_view>& chunks) {
  for (std::string_view c : chunks) {
    const char* p = c.data();
    size_t left = c.size();
    while (left > 0) {
      const ssize_t w = ::write(fd, p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return false;
      p += w;
      left -= static_cast<size_t>(w);
    }
  }
  return true;
}

}  // namespace

fs::path atomic_temp_path(const fs::path& path) {
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  return parent / str(".tmp-", path.filename().string(), ".", ::getpid());
}

// Through the file gate's fsync-only open: a FIFO in the file's place cannot hang it.
void fsync_file(const fs::path& path) { fsync_fd(open_to_fsync(path.string()), path); }
void fsync_dir(const fs::path& dir) { fsync_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC), dir); }

void write_file_atomic(const fs::path& path, const std::vector<std::string_view>& chunks) {
  const fs::path tmp = atomic_temp_path(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path.string(), ": cannot create ", tmp.filename().string(), " beside it (", std::strerror(errno), ")");
  auto give_up = [&](const char* what, int err) {
    ::unlink(tmp.c_str());
    fail(path.string(), ": ", what, " failed (", std::strerror(err), ")");
  };
  if (!write_all(fd, chunks) || ::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    give_up("write", err);
  }
  if (::close(fd) != 0) give_up("close", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) give_up("rename into place", errno);
  fsync_dir(tmp.parent_path());
}

}  // namespace bt
