// One run per output folder: an advisory lock (flock) on OUTPUT_DIR/.bridgetune.lock held for the run's life,
// taken by rank 0 before anything in the folder is read for resuming or written. A second run in the same
// folder stops with one line naming the process that holds it; the kernel releases the lock when the holder
// exits, also when it is killed, so a stale lock never blocks. While it is held, every .tmp-* staging entry in
// the folder belongs to a dead run (or to this one), which is what makes remove_stale_staging() safe.
#pragma once
#include <filesystem>
#include <memory>

namespace bt::train {

class OutputDirLock {
 public:
  // Creates the lock file if needed; throws bt::Error "--output_dir DIR is in use by another bridgetune run
  // (pid N)" when another process holds it.
  static std::unique_ptr<OutputDirLock> acquire(const std::filesystem::path& dir);
  ~OutputDirLock();
  OutputDirLock(const OutputDirLock&) = delete;
  OutputDirLock& operator=(const OutputDirLock&) = delete;

 private:
  explicit OutputDirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace bt::train
