// MLflow tracking without MLflow: a run written into MLflow's local file store (`--report_to mlflow`), laid out
// as mlflow's FileStore writes it, so `mlflow ui --backend-store-uri PATH`, MlflowClient and HF users' scripts
// read it as their own. Torch-free.
//
// Contract (the layout, ROOT = the store's folder):
//  - ROOT/.trash/ and ROOT/0/meta.yaml (experiment 0, "Default") are created with a store that has no 0/ yet.
//  - ROOT/<experiment_id>/meta.yaml: artifact_location, creation_time, experiment_id, last_update_time,
//    lifecycle_stage, name (YAML, keys sorted, as PyYAML writes them). A named experiment that no active one is
//    called is created with a random 63-bit integer id, as mlflow does.
//  - ROOT/<exp>/<run_id>/meta.yaml: the persisted RunInfo (run_id = run_uuid = 32 hex digits, status 1 RUNNING,
//    3 FINISHED, 4 FAILED, 5 KILLED; start_time / end_time in ms; source_type 4 LOCAL); artifacts/ (empty).
//  - params/<key> and tags/<key>: the value as the file's whole content (no newline); a parameter keeps its first
//    value (MLflow refuses to change one). metrics/<key>: one line per value, "<timestamp_ms> <value> <step>",
//    the value as Python's str() writes it ("0.25", "5e-05", "nan", "inf": float() reads every one back).
//  - Keys are made valid MLflow names (letters, digits, _ - . space /; no "." or ".." segment): anything else
//    becomes '_', so no key leaves its folder.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bt::report {

// Where a run goes, from the environment as mlflow and HF's MLflowCallback read it.
struct MlflowTarget {
  std::filesystem::path root;   // MLFLOW_TRACKING_URI (file:PATH, file:///abs, or a path), else ./mlruns; absolute
  std::string experiment_name;  // MLFLOW_EXPERIMENT_NAME ("": MLFLOW_EXPERIMENT_ID, else "0", Default)
  std::string experiment_id;    // MLFLOW_EXPERIMENT_ID
  std::string run_id;           // MLFLOW_RUN_ID: append to this existing run (resuming one) instead of a new one
  std::map<std::string, std::string> tags;  // MLFLOW_TAGS: a JSON object of tags
};
// Throws bt::Error naming the variable: a tracking URI that is no local file store (http:, databricks, sqlite:...:
// bridgetune writes files only; a server can serve them), MLFLOW_TAGS that is no JSON object, a bad run id.
MlflowTarget mlflow_target_from_env();

enum class MlflowStatus { kRunning = 1, kFinished = 3, kFailed = 4, kKilled = 5 };

class MlflowRun {
 public:
  // Creates the store, the experiment and the run (status RUNNING, tags mlflow.runName, mlflow.user,
  // mlflow.source.name, mlflow.source.type and target.tags; a tag mlflow.runName names the run instead of
  // run_name), or reopens target.run_id (RUNNING again, end_time cleared, its name kept). Errors name the file.
  MlflowRun(const MlflowTarget& target, const std::string& run_name);
  ~MlflowRun();  // a run never ended (an exception unwinding past its owner) ends FAILED
  MlflowRun(const MlflowRun&) = delete;
  MlflowRun& operator=(const MlflowRun&) = delete;

  // A JSON object's members as parameters, values as HF's str() gives them (True/False/None, 5e-05; arrays and
  // objects as JSON). Values over MLflow's 6000 characters are dropped as HF drops them; their keys are returned.
  std::vector<std::string> log_params(const nlohmann::json& params);
  void log_metric(const std::string& key, double value, int64_t step, int64_t timestamp_ms);
  void set_tag(const std::string& key, const std::string& value);
  // Writes status and end_time (now); later calls do nothing.
  void end(MlflowStatus status);

  const std::string& run_id() const { return run_id_; }
  const std::string& experiment_id() const { return experiment_id_; }
  const std::filesystem::path& root() const { return root_; }
  const std::filesystem::path& run_dir() const { return run_dir_; }

 private:
  void write_meta(MlflowStatus status, int64_t end_time_ms);
  std::mutex mu_;
  std::filesystem::path root_, run_dir_;
  std::string run_id_, experiment_id_, run_name_, user_;
  int64_t start_time_ms_ = 0;
  bool ended_ = false;
};

// The process's active run (as MLflow's fluent API has one): the recipe sets it for the length of `train`, and
// the trainer's run log mirrors into it (MetricsLog::add_mlflow). nullptr: none.
void set_active_mlflow_run(std::shared_ptr<MlflowRun> run);
std::shared_ptr<MlflowRun> active_mlflow_run();

// Python's str() of a float: the shortest digits that read back exactly, "1.0", "5e-05", "1e+16", "nan", "-inf".
std::string python_float(double v);
// A valid MLflow key for `key` (see the contract); "_" for an empty one.
std::string mlflow_key(const std::string& key);
// "now" in ms since the epoch, as MLflow stamps metrics and times.
int64_t mlflow_now_ms();

}  // namespace bt::report
