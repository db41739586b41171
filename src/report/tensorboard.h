// TensorBoard scalars without TensorFlow: an event file (TFRecord framing of Event protocol buffers) that
// TensorBoard, tensorboardX and tbparse read, written as the Hugging Face Trainer's TensorBoard callback does
// (`--report_to tensorboard`, files under --logging_dir).
//
// Contract:
//  - The file is DIR/events.out.tfevents.<unix seconds>.<host>.<pid>.<n> (n counts this process's writers, so
//    no two share a file); the first event is file_version "brain.Event:2".
//  - add_scalar() appends one Event {wall_time, step, summary {value {tag, simple_value}}} and flushes it, so a
//    killed run keeps every scalar it logged (a torn last record is what TensorBoard itself tolerates).
//  - Records are framed as TFRecord: u64 length, u32 masked CRC32C of the length, data, u32 masked CRC32C of the
//    data (little-endian); masked(c) = ((c >> 15) | (c << 17)) + 0xa282ead8.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace bt::report {

// CRC32C (Castagnoli), and the masking TFRecord applies to it.
uint32_t crc32c(std::string_view data);
uint32_t masked_crc32c(std::string_view data);

class TensorBoardWriter {
 public:
  explicit TensorBoardWriter(const std::string& dir);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  void add_scalar(const std::string& tag, double value, int64_t step, double wall_time);
  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& event);
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace bt::report
