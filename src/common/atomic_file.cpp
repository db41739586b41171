#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace bt {

namespace fs = std::filesystem;

namespace {

void fsync_path(const fs::path& p, int flags) {
  const int fd = ::open(p.c_str(), flags | O_CLOEXEC);
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

void fsync_file(const fs::path& path) { fsync_path(path, O_RDONLY); }
void fsync_dir(const fs::path& dir) { fsync_path(dir, O_RDONLY | O_DIRECTORY); }

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
