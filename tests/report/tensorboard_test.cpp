// The TensorBoard event file, read back by an independent reader of the TFRecord framing (its own bitwise
// CRC32C, not the writer's table) and of the Event / Summary protocol buffers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "report/run_log.h"
#include "report/tensorboard.h"

namespace fs = std::filesystem;

namespace {

uint32_t crc32c_bitwise(const std::string& s) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
  }
  return ~c;
}
uint32_t masked(uint32_t c) { return ((c >> 15) | (c << 17)) + 0xa282ead8u; }

struct Scalar {
  std::string tag, file_version;
  double wall = 0;
  int64_t step = 0;
  float value = 0;
};

struct Proto {  // a minimal wire-format reader
  const std::string& s;
  size_t p = 0;
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; p < s.size(); shift += 7) {
      const uint8_t b = uint8_t(s[p++]);
      v |= uint64_t(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    ADD_FAILURE() << "truncated varint";
    return v;
  }
  std::string bytes() {
    const size_t n = size_t(varint());
    std::string out = s.substr(p, n);
    p += n;
    return out;
  }
  template <class T>
  T fixed() {
    T v;
    std::memcpy(&v, s.data() + p, sizeof v);
    p += sizeof v;
    return v;
  }
};

Scalar parse_event(const std::string& e) {
  Scalar out;
  Proto r{e};
  while (r.p < e.size()) {
    const uint64_t key = r.varint();
    if (key == (1 << 3 | 1)) out.wall = r.fixed<double>();
    else if (key == (2 << 3 | 0)) out.step = int64_t(r.varint());
    else if (key == (3 << 3 | 2)) out.file_version = r.bytes();
    else if (key == (5 << 3 | 2)) {
      std::string summary = r.bytes();
      Proto s{summary};
      EXPECT_EQ(s.varint(), 1u << 3 | 2);  // Summary.value
      std::string value = s.bytes();
      Proto v{value};
      while (v.p < value.size()) {
        const uint64_t k = v.varint();
        if (k == (1 << 3 | 2)) out.tag = v.bytes();
        else if (k == (2 << 3 | 5)) out.value = v.fixed<float>();
        else ADD_FAILURE() << "unexpected Value field " << k;
      }
    } else {
      ADD_FAILURE() << "unexpected Event field " << key;
      break;
    }
  }
  return out;
}

std::vector<Scalar> read_events(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string all = ss.str();
  std::vector<Scalar> out;
  size_t p = 0;
  while (p < all.size()) {
    EXPECT_LE(p + 12, all.size());
    const std::string len_bytes = all.substr(p, 8);
    uint64_t len;
    uint32_t len_crc, data_crc;
    std::memcpy(&len, len_bytes.data(), 8);
    std::memcpy(&len_crc, all.data() + p + 8, 4);
    EXPECT_EQ(len_crc, masked(crc32c_bitwise(len_bytes)));
    const std::string data = all.substr(p + 12, size_t(len));
    std::memcpy(&data_crc, all.data() + p + 12 + len, 4);
    EXPECT_EQ(data_crc, masked(crc32c_bitwise(data)));
    out.push_back(parse_event(data));
    p += 12 + size_t(len) + 4;
  }
  return out;
}

}  // namespace

TEST(TensorBoard, Crc32cKnownAnswer) {
  EXPECT_EQ(bt::report::crc32c("123456789"), 0xE3069283u);  // the CRC-32C check value
  EXPECT_EQ(bt::report::crc32c(""), 0u);
}

TEST(TensorBoard, ScalarsReadBackThroughAnIndependentReader) {
  const fs::path dir = fs::temp_directory_path() / ("bt_tb_" + std::to_string(getpid()));
  fs::remove_all(dir);
  std::string path;
  {
    bt::report::TensorBoardWriter w(dir.string());
    path = w.path();
    w.add_scalar("train/loss", 2.5, 10, 1700000000.25);
    w.add_scalar("train/learning_rate", 1e-5, 10, 1700000000.5);
    w.add_scalar("eval/matching_accuracy", 0.8125, 300, 1700000100.0);
  }
  EXPECT_EQ(fs::path(path).filename().string().rfind("events.out.tfevents.", 0), 0u);
  auto ev = read_events(path);
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].file_version, "brain.Event:2");
  EXPECT_EQ(ev[1].tag, "train/loss");
  EXPECT_EQ(ev[1].step, 10);
  EXPECT_FLOAT_EQ(ev[1].value, 2.5f);
  EXPECT_DOUBLE_EQ(ev[1].wall, 1700000000.25);
  EXPECT_FLOAT_EQ(ev[2].value, 1e-5f);
  EXPECT_EQ(ev[3].tag, "eval/matching_accuracy");
  EXPECT_EQ(ev[3].step, 300);
  fs::remove_all(dir);
}

TEST(TensorBoard, RunLogRecordsBecomeTheTrainersScalars) {
  // The run log is the one place metrics are recorded: with TensorBoard on, each record's numbers become scalars
  // under the HF Trainer's tags, at the record's step.
  const fs::path dir = fs::temp_directory_path() / ("bt_tb_log_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    bt::report::MetricsLog log(dir / "metrics.jsonl", false, 0);
    log.write(bt::report::WindowRecord{7, 0.5, 2.25, 1e-5, 80.0, 12.5, 0.75});  // before: metrics.jsonl only
    log.add_tensorboard((dir / "runs").string());
    log.write(bt::report::WindowRecord{10, 1.0, 2.0, 2e-5, 90.0, 10.0, 0.5});
    log.write(nlohmann::json{{"step", 10}, {"eval_loss", 1.5}, {"eval_i2t_r1", 0.25}});
    log.write(nlohmann::json{{"step", 10}, {"test_loss", 1.75}, {"note", "not a scalar"}});
  }
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir / "runs")) files.push_back(e.path().string());
  ASSERT_EQ(files.size(), 1u);
  auto ev = read_events(files[0]);
  std::map<std::string, Scalar> by_tag;
  for (size_t i = 1; i < ev.size(); ++i) by_tag[ev[i].tag] = ev[i];
  for (const char* t : {"train/loss", "train/learning_rate", "train/grad_norm", "train/samples_per_second",
                        "train/data_wait_percent", "train/epoch", "eval/loss", "eval/i2t_r1", "test/loss"})
    EXPECT_EQ(by_tag.count(t), 1u) << t;
  EXPECT_EQ(ev.size(), 1u + 9u);  // the header, then exactly those
  EXPECT_FLOAT_EQ(by_tag["train/loss"].value, 2.0f);
  EXPECT_EQ(by_tag["train/loss"].step, 10);
  EXPECT_FLOAT_EQ(by_tag["train/learning_rate"].value, 2e-5f);
  EXPECT_FLOAT_EQ(by_tag["train/samples_per_second"].value, 90.0f);
  EXPECT_FLOAT_EQ(by_tag["eval/loss"].value, 1.5f);
  EXPECT_FLOAT_EQ(by_tag["test/loss"].value, 1.75f);
  EXPECT_EQ(bt::report::read_records(dir / "metrics.jsonl").size(), 4u);
  fs::remove_all(dir);
}
