// Files a training run leaves in output_dir: metrics.jsonl (one JSON object per logging window or eval, flushed
// per line so a killed run keeps what it logged) and train_results.json (written atomically at the end).
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bt::train {

struct WindowRecord {
  int64_t step = 0;
  double epoch = 0;
  double loss = 0;
  double lr = 0;
  double samples_per_s = 0;
  double data_wait_percent = 0;
  double grad_norm = 0;
};

class MetricsLog {
 public:
  // append: keep the lines of an earlier session (resume) up to and including step `keep_through_step`.
  MetricsLog(const std::filesystem::path& path, bool append, int64_t keep_through_step);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;
  void write(const nlohmann::json& record);
  void write(const WindowRecord& r);

 private:
  FILE* f_ = nullptr;
};

nlohmann::json to_json(const WindowRecord& r);
// The training-window records of a metrics.jsonl (eval lines, having "eval_loss", are skipped).
std::vector<WindowRecord> read_window_records(const std::filesystem::path& path);
void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& j);
nlohmann::json read_json_file(const std::filesystem::path& path);  // error names the file

}  // namespace bt::train
