// Caption rows may name any path: only regular files of bounded size are read, nothing blocks, and the
// messages name the row and the reason without quoting the file's bytes.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "common/error.h"
#include "data/captions_dataset.h"
#include "test_util.h"

using namespace bt::data;
using bt::data::testing::TempDir;
using bt::data::testing::write_file;

namespace {

std::string read_error(const std::string& captions, size_t row, const CaptionsOptions& o = {}) {
  auto ds = open_captions(captions, o);
  std::vector<uint8_t> bytes;
  try {
    ds->read_image(row, bytes);
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(HostileFiles, DevZeroIsRefusedWithoutReading) {
  TempDir d;
  write_file(d / "c.jsonl", "{\"image\": \"/dev/zero\", \"caption\": \"x\"}\n");
  const std::string e = read_error(d / "c.jsonl", 0);
  EXPECT_NE(e.find("c.jsonl:1: image '/dev/zero': is a device, not a regular file"), std::string::npos) << e;
}

TEST(HostileFiles, FifoDoesNotHang) {
  TempDir d;
  ASSERT_EQ(::mkfifo((d / "pipe.jpg").c_str(), 0600), 0);
  write_file(d / "c.jsonl", "{\"image\": \"pipe.jpg\", \"caption\": \"x\"}\n");
  auto t0 = std::chrono::steady_clock::now();
  const std::string e = read_error(d / "c.jsonl", 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_NE(e.find("image 'pipe.jpg': is a FIFO, not a regular file"), std::string::npos) << e;
}

TEST(HostileFiles, FolderIsRefused) {
  TempDir d;
  std::filesystem::create_directories(d / "sub.jpg");
  write_file(d / "c.jsonl", "{\"image\": \"sub.jpg\", \"caption\": \"x\"}\n");
  const std::string e = read_error(d / "c.jsonl", 0);
  EXPECT_NE(e.find("is a folder"), std::string::npos) << e;
}

TEST(HostileFiles, SizeCapHoldsBeforeReading) {
  TempDir d;
  write_file(d / "c.jsonl", "{\"image\": \"big.jpg\", \"caption\": \"x\"}\n");
  {
    // A sparse 100 GB file: reading it would take minutes and the memory; the cap is checked on the size.
    int fd = ::open((d / "big.jpg").c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t(100) << 30), 0);
    ::close(fd);
  }
  const std::string e = read_error(d / "c.jsonl", 0);
  EXPECT_NE(e.find("image 'big.jpg': 107374182400 bytes, more than the limit of 67108864 bytes"), std::string::npos)
      << e;
  CaptionsOptions small;
  small.max_image_bytes = 10;
  write_file(d / "ok.jpg", std::string(11, 'x'));
  write_file(d / "c2.jsonl", "{\"image\": \"ok.jpg\", \"caption\": \"x\"}\n");
  EXPECT_NE(read_error(d / "c2.jsonl", 0, small).find("11 bytes, more than the limit of 10"), std::string::npos);
  small.max_image_bytes = 11;
  EXPECT_EQ(read_error(d / "c2.jsonl", 0, small), "(no error)");
}

TEST(HostileFiles, SymlinkToRegularFileWorksToDeviceDoesNot) {
  TempDir d;
  write_file(d / "real.jpg", "abc");
  std::filesystem::create_symlink(d / "real.jpg", d / "link.jpg");
  std::filesystem::create_symlink("/dev/zero", d / "zero.jpg");
  write_file(d / "c.jsonl",
             "{\"image\": \"link.jpg\", \"caption\": \"x\"}\n{\"image\": \"zero.jpg\", \"caption\": \"y\"}\n");
  EXPECT_EQ(read_error(d / "c.jsonl", 0), "(no error)");
  EXPECT_NE(read_error(d / "c.jsonl", 1).find("is a device"), std::string::npos);
}

TEST(HostileFiles, CaptionsFileMustBeRegular) {
  TempDir d;
  ASSERT_EQ(::mkfifo((d / "c.jsonl").c_str(), 0600), 0);
  std::string e;
  try {
    open_captions(d / "c.jsonl");
  } catch (const bt::Error& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("is a FIFO"), std::string::npos) << e;
}

}  // namespace
