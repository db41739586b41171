#include "train/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/error.h"

namespace bt::train {

std::unique_ptr<OutputDirLock> OutputDirLock::acquire(const std::filesystem::path& dir) {
  const std::string path = (dir / ".bridgetune.lock").string();
  // O_NOFOLLOW: a link planted in the folder cannot make us lock (or truncate) some other file.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) fail(path, ": cannot open the output folder's lock file (", std::strerror(errno), ")");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    ::close(fd);
    if (err != EWOULDBLOCK) fail(path, ": cannot lock (", std::strerror(err), ")");
    std::string pid = n > 0 ? std::string(buf, size_t(n)) : "unknown";
    pid = pid.substr(0, pid.find_first_not_of("0123456789"));
    fail("--output_dir ", dir.string(), " is in use by another bridgetune run (pid ", pid.empty() ? "unknown" : pid,
         "); wait for it to end or choose another --output_dir");
  }
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) != ssize_t(me.size())) {
    // the lock holds without the pid: only the message of a second run would lack it
  }
  return std::unique_ptr<OutputDirLock>(new OutputDirLock(fd));
}

OutputDirLock::~OutputDirLock() { ::close(fd_); }  // closing the last descriptor releases the flock

}  // namespace bt::train
