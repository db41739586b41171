#include "report/tensorboard.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "common/error.h"

namespace bt::report {

namespace {

const std::array<uint32_t, 256>& crc_table() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // reflected Castagnoli
      t[i] = c;
    }
    return t;
  }();
  return table;
}

// Protocol buffer wire format, only what Event and Summary need.
void varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += char(uint8_t(v) | 0x80);
    v >>= 7;
  }
  out += char(uint8_t(v));
}
template <class T>
void fixed(std::string& out, T v) {  // little-endian (the hosts we build for)
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}
void field_bytes(std::string& out, int field, std::string_view bytes) {
  varint(out, uint64_t(field) << 3 | 2);
  varint(out, bytes.size());
  out.append(bytes);
}

std::string event_header(double wall_time, int64_t step) {
  std::string e;
  varint(e, 1 << 3 | 1);  // wall_time: double
  fixed(e, wall_time);
  varint(e, 2 << 3 | 0);  // step: int64
  varint(e, uint64_t(step));
  return e;
}

std::string host_name() {
  char h[256] = {};
  if (gethostname(h, sizeof h - 1) != 0 || !h[0]) return "localhost";
  return h;
}

}  // namespace

uint32_t crc32c(std::string_view data) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = crc_table()[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(std::string_view data) {
  const uint32_t c = crc32c(data);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

TensorBoardWriter::TensorBoardWriter(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail(dir, ": cannot create the TensorBoard log folder: ", ec.message());
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const double wall = std::chrono::duration<double>(now).count();
  // TensorFlow's own suffix (<pid>.<n>) keeps two writers of one process, or of two, apart within a second.
  static std::atomic<int> serial{0};
  path_ = (std::filesystem::path(dir) /
           str("events.out.tfevents.", int64_t(wall), ".", host_name(), ".", getpid(), ".", serial++))
              .string();
  file_ = std::fopen(path_.c_str(), "ab");
  if (!file_) fail(path_, ": cannot create: ", std::strerror(errno));
  std::string e = event_header(wall, 0);
  field_bytes(e, 3, "brain.Event:2");  // file_version
  write_record(e);
}

TensorBoardWriter::~TensorBoardWriter() {
  if (file_) std::fclose(file_);
}

void TensorBoardWriter::add_scalar(const std::string& tag, double value, int64_t step, double wall_time) {
  std::string v;
  field_bytes(v, 1, tag);   // Summary.Value.tag
  varint(v, 2 << 3 | 5);    // Summary.Value.simple_value: float
  fixed(v, float(value));
  std::string summary;
  field_bytes(summary, 1, v);  // Summary.value
  std::string e = event_header(wall_time, step);
  field_bytes(e, 5, summary);  // Event.summary
  write_record(e);
}

void TensorBoardWriter::write_record(const std::string& event) {
  std::string rec;
  fixed(rec, uint64_t(event.size()));
  const uint32_t len_crc = masked_crc32c(rec);
  fixed(rec, len_crc);
  rec += event;
  fixed(rec, masked_crc32c(event));
  if (std::fwrite(rec.data(), 1, rec.size(), file_) != rec.size() || std::fflush(file_) != 0)
    fail(path_, ": cannot write (disk full?): ", std::strerror(errno));
}

}  // namespace bt::report
