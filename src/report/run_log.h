// Files a training run leaves in output_dir: metrics.jsonl (one JSON object per logging window or eval, flushed
// per line so a killed run keeps what it logged) and train_results.json (written atomically at the end).
// MetricsLog is the one place a run's metrics are recorded: with add_tensorboard() every record also becomes
// TensorBoard scalars (the HF Trainer's tags: train/loss, train/learning_rate, eval/loss, ...; tensorboard_tag()),
// and the HF trainer_state.json's log_history is built from the same lines (hf_outputs.h); with add_mlflow() they
// are also metrics of an MLflow run (HF's MLflowCallback names: loss, learning_rate, eval_loss; mlflow_metric_name()).
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <memory>
#include <nlohmann/json.hpp>

namespace bt::report {

class TensorBoardWriter;
class MlflowRun;

struct WindowRecord {
  int64_t step = 0;
  double epoch = 0;
  double loss = 0;
  double lr = 0;
  double samples_per_s = 0;
  double data_wait_percent = 0;
  double grad_norm = 0;
  // Since the run (or its resume) started: bad samples skipped under --on_bad_sample skip, and steps skipped for a
  // NaN/inf loss or gradient norm. Written only when non-zero.
  int64_t skipped_samples = 0, nonfinite_steps = 0;
  std::vector<std::pair<std::string, double>> scalars;  // more named values of this window (logit_scale, lr_vision, ...)
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
  // From now on every numeric field of a record (but "step") is also a TensorBoard scalar at the record's step,
  // in an event file under `dir` (created).
  void add_tensorboard(const std::string& dir);
  // From now on every numeric field of a record (but "step") is also a metric of `run` at the record's step
  // (NaN and inf included: MLflow stores them). The run is shared: the trainer's log and the recipe's both feed it.
  void add_mlflow(std::shared_ptr<MlflowRun> run);
  // --report_to's integrations: TensorBoard under tensorboard_dir (none when empty) and the process's active MLflow
  // run (report/mlflow.h; none when there is none).
  void add_integrations(const std::string& tensorboard_dir);

 private:
  FILE* f_ = nullptr;
  std::unique_ptr<TensorBoardWriter> tb_;
  std::shared_ptr<MlflowRun> mlflow_;
};

// The TensorBoard tag of a metrics.jsonl key, as HF's TensorBoardCallback names it: eval_X -> eval/X,
// test_X -> test/X, anything else train/<HF name> (lr -> train/learning_rate, samples_per_s ->
// train/samples_per_second); "" for keys that are no scalar ("step").
std::string tensorboard_tag(const std::string& key);
// The MLflow metric of a metrics.jsonl key, as HF's MLflowCallback names it (the Trainer's log keys): eval_X and
// test_X unchanged, lr -> learning_rate, samples_per_s -> samples_per_second, the rest unchanged; "" for "step".
std::string mlflow_metric_name(const std::string& key);
// Every JSON object line of a metrics.jsonl, in order (lines cut by a kill are skipped; no file: none).
std::vector<nlohmann::json> read_records(const std::filesystem::path& path);

nlohmann::json to_json(const WindowRecord& r);
// The training-window records of a metrics.jsonl (eval lines, having "eval_loss", are skipped).
std::vector<WindowRecord> read_window_records(const std::filesystem::path& path);
void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& j);
nlohmann::json read_json_file(const std::filesystem::path& path);  // error names the file

}  // namespace bt::report
