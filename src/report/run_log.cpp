#include "report/run_log.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/file_gate.h"
#include "common/json.h"
#include "report/mlflow.h"
#include "report/tensorboard.h"

namespace bt::report {

nlohmann::json to_json(const WindowRecord& r) {
  nlohmann::json j = {{"step", r.step},   {"epoch", r.epoch},         {"loss", r.loss},
                      {"lr", r.lr},       {"samples_per_s", r.samples_per_s}, {"data_wait_percent", r.data_wait_percent},
                      {"grad_norm", r.grad_norm}};
  if (r.skipped_samples > 0) j["skipped_samples"] = r.skipped_samples;
  if (r.nonfinite_steps > 0) j["nonfinite_steps"] = r.nonfinite_steps;
  for (const auto& [name, value] : r.scalars) j[name] = value;
  return j;
}

namespace {
// The lines of a run's own log file (empty when it does not exist yet); read through the file gate, so a FIFO or
// /dev/zero put in its place is an error naming it, not a hang or an endless read.
std::istringstream lines_of(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::istringstream();
  return std::istringstream(read_small_file(path.string(), kMaxLogBytes));
}
}  // namespace

MetricsLog::MetricsLog(const std::filesystem::path& path, bool append, int64_t keep_through_step) {
  std::string kept;
  if (append) {
    std::istringstream in = lines_of(path);
    std::string line;
    while (std::getline(in, line)) {
      auto j = try_parse_json(line);
      if (j.is_discarded() || !j.is_object()) continue;  // a line cut by a kill
      if (j.value("step", int64_t{0}) > keep_through_step) continue;
      kept += line + "\n";
    }
  }
  write_file_atomic(path, kept);
  f_ = std::fopen(path.c_str(), "a");
  if (!f_) fail(path.string(), ": cannot open for writing");
}

MetricsLog::~MetricsLog() {
  if (f_) std::fclose(f_);
}

void MetricsLog::write(const nlohmann::json& record) {
  const std::string s = record.dump() + "\n";
  std::fwrite(s.data(), 1, s.size(), f_);
  std::fflush(f_);
  if (!tb_ && !mlflow_) return;
  const double wall = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const int64_t step = record.value("step", int64_t{0});
  for (const auto& [k, v] : record.items()) {
    const std::string tag = tensorboard_tag(k);
    if (tag.empty() || !v.is_number()) continue;
    if (tb_) tb_->add_scalar(tag, v.get<double>(), step, wall);
    if (mlflow_) mlflow_->log_metric(mlflow_metric_name(k), v.get<double>(), step, int64_t(wall * 1000));
  }
}

void MetricsLog::add_tensorboard(const std::string& dir) { tb_ = std::make_unique<TensorBoardWriter>(dir); }

void MetricsLog::add_mlflow(std::shared_ptr<MlflowRun> run) { mlflow_ = std::move(run); }

void MetricsLog::add_integrations(const std::string& tensorboard_dir) {
  if (!tensorboard_dir.empty()) add_tensorboard(tensorboard_dir);
  if (auto run = active_mlflow_run()) add_mlflow(std::move(run));
}

std::string mlflow_metric_name(const std::string& key) {
  const std::string tag = tensorboard_tag(key);
  if (tag.rfind("train/", 0) != 0) return tag.empty() ? "" : key;  // eval_X, test_X: HF logs them as they are
  return tag.substr(6);
}

std::string tensorboard_tag(const std::string& key) {
  if (key == "step") return "";
  for (const char* prefix : {"eval_", "test_"})
    if (key.rfind(prefix, 0) == 0) return std::string(prefix, 4) + "/" + key.substr(5);
  if (key == "lr") return "train/learning_rate";
  if (key == "samples_per_s") return "train/samples_per_second";
  return "train/" + key;
}

std::vector<nlohmann::json> read_records(const std::filesystem::path& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in = lines_of(path);
  std::string line;
  while (std::getline(in, line)) {
    auto j = try_parse_json(line);
    if (!j.is_discarded() && j.is_object()) out.push_back(std::move(j));
  }
  return out;
}

void MetricsLog::write(const WindowRecord& r) { write(to_json(r)); }

std::vector<WindowRecord> read_window_records(const std::filesystem::path& path) {
  std::vector<WindowRecord> out;
  std::istringstream in = lines_of(path);
  std::string line;
  while (std::getline(in, line)) {
    auto j = try_parse_json(line);
    if (j.is_discarded() || !j.is_object() || j.contains("eval_loss") || !j.contains("loss")) continue;
    WindowRecord r;
    r.step = j.value("step", int64_t{0});
    r.epoch = j.value("epoch", 0.0);
    r.loss = j.value("loss", 0.0);
    r.lr = j.value("lr", 0.0);
    r.samples_per_s = j.value("samples_per_s", 0.0);
    r.data_wait_percent = j.value("data_wait_percent", 0.0);
    r.grad_norm = j.value("grad_norm", 0.0);
    r.skipped_samples = j.value("skipped_samples", int64_t{0});
    r.nonfinite_steps = j.value("nonfinite_steps", int64_t{0});
    out.push_back(r);
  }
  return out;
}

void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& j) {
  write_file_atomic(path, j.dump(2) + "\n");
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_small_file(path.string()), path.string());
}

}  // namespace bt::report
