// The file gate (common/file_gate.h): a FIFO, a device, a folder or a file over its cap is refused by name,
// without blocking and without reading it; a regular file is read whole.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "common/file_gate.h"
#include "common/json.h"
#include "error_of.h"

namespace fs = std::filesystem;

using bt::test::error_of;

TEST(FileGate, ReadsARegularFileWithinItsCap) {
  const fs::path p = fs::temp_directory_path() / "bt_gate_ok.json";
  std::ofstream(p) << "{\"a\": 1}";
  EXPECT_EQ(bt::read_small_file(p.string()), "{\"a\": 1}");
  EXPECT_NE(error_of([&] { bt::read_small_file(p.string(), 4); }).find("more than the limit of 4 bytes"),
            std::string::npos);
  uint64_t size = 0;
  const int fd = bt::open_regular_file(p.string(), 100, &size);
  EXPECT_EQ(size, 8u);
  EXPECT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);  // blocking again for mmap and plain reads
  close(fd);
}

TEST(FileGate, RefusesFifosDevicesAndFoldersWithoutReading) {
  const fs::path fifo = fs::temp_directory_path() / "bt_gate_fifo";
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // nobody writes to the FIFO: a blocking open would hang this test forever
  EXPECT_NE(error_of([&] { bt::read_small_file(fifo.string()); }).find("bt_gate_fifo: is a FIFO"), std::string::npos);
  EXPECT_NE(error_of([&] { bt::open_regular_file(fifo.string()); }).find("is a FIFO"), std::string::npos);
  fs::remove(fifo);
  const fs::path zero = fs::temp_directory_path() / "bt_gate_zero.json";
  fs::remove(zero);
  fs::create_symlink("/dev/zero", zero);
  EXPECT_NE(error_of([&] { bt::read_small_file(zero.string()); }).find("bt_gate_zero.json: is a device"),
            std::string::npos);
  fs::remove(zero);
  EXPECT_NE(error_of([&] { bt::read_small_file(fs::temp_directory_path().string()); }).find("is a folder"),
            std::string::npos);
  EXPECT_NE(error_of([&] { bt::read_small_file("/nonexistent/config.json"); }).find("/nonexistent/config.json: "),
            std::string::npos);
}

// The JSON entry point (common/json.h): nesting past 64 levels is refused while parsing, by name, even a million
// levels deep (nlohmann's recursive DOM destructor would overflow the stack on the built document).
TEST(JsonEntry, DeepNestingIsRefusedByName) {
  const std::string deep = "{\"a\": " + std::string(1000000, '[') + std::string(1000000, ']') + "}";
  EXPECT_EQ(error_of([&] { bt::parse_json_text(deep, "config.json"); }),
            "config.json: JSON nests deeper than 64 levels");
  EXPECT_TRUE(bt::try_parse_json(deep).is_discarded());
  const std::string ok = std::string(60, '[') + std::string(60, ']');
  EXPECT_TRUE(bt::parse_json_text(ok, "x").is_array());
  EXPECT_EQ(error_of([&] { bt::parse_json_text("{", "t.json"); }).rfind("t.json: not valid JSON (", 0), 0u);
}
