// One run per output folder (train/output_lock.h): a second holder is refused with the first one's pid, and the
// lock is free again once released.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/error.h"
#include "train/output_lock.h"

namespace fs = std::filesystem;
using bt::train::OutputDirLock;

TEST(OutputDirLock, ASecondRunIsRefusedWithTheHoldersPid) {
  const fs::path dir = fs::temp_directory_path() / "bt_output_lock_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    auto held = OutputDirLock::acquire(dir);
    // a second open of the lock file is a second holder, as another process would be
    std::string err;
    try {
      OutputDirLock::acquire(dir);
    } catch (const bt::Error& e) {
      err = e.what();
    }
    EXPECT_NE(err.find("is in use by another bridgetune run (pid " + std::to_string(getpid()) + ")"),
              std::string::npos)
        << err;
  }
  EXPECT_NO_THROW(OutputDirLock::acquire(dir));  // released with its holder
  // a link planted as the lock file is not followed
  fs::remove(dir / ".bridgetune.lock");
  fs::create_symlink("/etc/hostname", dir / ".bridgetune.lock");
  EXPECT_THROW(OutputDirLock::acquire(dir), bt::Error);
  fs::remove_all(dir);
}
