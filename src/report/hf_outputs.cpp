#include "report/hf_outputs.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

#include "report/run_log.h"

namespace bt::report {

namespace fs = std::filesystem;

HfStateInfo hf_state_of_settings(const nlohmann::json& s, int64_t global_step) {
  HfStateInfo i;
  i.global_step = global_step;
  if (!s.is_object()) return i;
  i.max_steps = s.value("total_steps", int64_t{0});
  i.steps_per_epoch = s.value("steps_per_epoch", int64_t{0});
  i.logging_steps = s.value("logging_steps", i.logging_steps);
  i.eval_steps = s.value("eval_steps", i.eval_steps);
  i.save_steps = s.value("save_steps", i.save_steps);
  i.train_batch_size = s.value("per_device_train_batch_size", i.train_batch_size);
  i.num_train_epochs = s.value("num_train_epochs", i.num_train_epochs);
  return i;
}

void apply_selection(HfStateInfo& info, const nlohmann::json& selection, const fs::path& output_dir,
                     int64_t saving_step) {
  if (!selection.is_object()) return;
  const auto best = selection.find("best_metric");
  if (best == selection.end() || !best->is_number()) return;
  info.best_metric = *best;
  const int64_t step = selection.value("best_step", int64_t{-1});
  const fs::path ck = output_dir / ("checkpoint-" + std::to_string(step));
  std::error_code ec;
  if (step >= 0 && (step == saving_step || fs::is_directory(ck, ec))) info.best_model_checkpoint = ck.string();
}

nlohmann::json hf_log_history(const std::vector<nlohmann::json>& records, int64_t through_step,
                              int64_t steps_per_epoch) {
  nlohmann::json out = nlohmann::json::array();
  for (const nlohmann::json& r : records) {
    const int64_t step = r.value("step", int64_t{0});
    if (step > through_step) continue;
    nlohmann::json e = nlohmann::json::object();
    if (r.contains("loss") && !r.contains("eval_loss")) {  // a training window
      e["loss"] = r["loss"];
      if (r.contains("grad_norm")) e["grad_norm"] = r["grad_norm"];
      if (r.contains("lr")) e["learning_rate"] = r["lr"];
    } else {  // eval, test or the end-of-training summary: HF logs the metrics as they are
      for (const auto& [k, v] : r.items())
        if (k != "step" && k != "epoch") e[k] = v;
    }
    if (r.contains("epoch")) e["epoch"] = r["epoch"];
    else if (steps_per_epoch > 0) e["epoch"] = double(step) / double(steps_per_epoch);
    e["step"] = step;
    out.push_back(std::move(e));
  }
  return out;
}

nlohmann::ordered_json hf_trainer_state(const HfStateInfo& i, const nlohmann::json& log_history) {
  // HF writes its dataclass with sort_keys=True; so do we. eval_steps/save_steps: the interval in steps
  // (per-epoch: the epoch's steps; none: HF's default 500).
  auto steps_of = [&](int64_t v) -> int64_t { return v > 0 ? v : v < 0 ? i.steps_per_epoch : 500; };
  nlohmann::ordered_json j;
  j["best_metric"] = i.best_metric;
  j["best_model_checkpoint"] = i.best_model_checkpoint.empty() ? nlohmann::json(nullptr) : nlohmann::json(i.best_model_checkpoint);
  j["epoch"] = i.epoch();
  j["eval_steps"] = steps_of(i.eval_steps);
  j["global_step"] = i.global_step;
  j["is_hyper_param_search"] = false;
  j["is_local_process_zero"] = true;  // only rank 0 writes
  j["is_world_process_zero"] = true;
  j["log_history"] = log_history;
  j["logging_steps"] = i.logging_steps;
  j["max_steps"] = i.max_steps;
  j["num_input_tokens_seen"] = 0;
  j["num_train_epochs"] = i.num_train_epochs;
  j["save_steps"] = steps_of(i.save_steps);
  const bool done = i.max_steps > 0 && i.global_step >= i.max_steps;
  j["stateful_callbacks"] = {{"TrainerControl",
                              {{"args",
                                {{"should_epoch_stop", false},
                                 {"should_evaluate", false},
                                 {"should_log", false},
                                 {"should_save", true},
                                 {"should_training_stop", done || i.stopped_early}}},
                               {"attributes", nlohmann::json::object()}}}};
  j["total_flos"] = i.total_flos;
  j["train_batch_size"] = i.train_batch_size;
  j["trial_name"] = nullptr;
  j["trial_params"] = nullptr;
  return j;
}

void write_hf_trainer_state(const fs::path& path, const fs::path& metrics_jsonl, const HfStateInfo& info) {
  const auto history = hf_log_history(read_records(metrics_jsonl), info.global_step, info.steps_per_epoch);
  write_json_atomic(path, hf_trainer_state(info, history));
}

void save_hf_metrics(const fs::path& output_dir, const std::string& split, const nlohmann::json& metrics,
                     const nlohmann::json& own) {
  const fs::path split_file = output_dir / (split + "_results.json");
  for (const fs::path& p : {split_file, output_dir / "all_results.json"}) {
    nlohmann::json j = fs::exists(p) ? read_json_file(p) : nlohmann::json::object();
    if (!j.is_object()) j = nlohmann::json::object();
    if (p == split_file) j.update(own);
    j.update(metrics);
    write_json_atomic(p, j);
  }
}

namespace {

std::string cell(const nlohmann::json& v) {
  if (v.is_number_float()) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4f", v.get<double>());
    return b;
  }
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// "eval_i2t_r1" -> "I2t R1" (HF's model card: prefix dropped, words capitalised).
std::string metric_title(std::string k) {
  if (k.rfind("eval_", 0) == 0) k = k.substr(5);
  bool up = true;
  for (char& c : k) {
    if (c == '_') c = ' ', up = true;
    else if (up) c = char(std::toupper(static_cast<unsigned char>(c))), up = false;
  }
  return k;
}

std::string epoch_cell(const nlohmann::json& e) { return e.contains("epoch") ? cell(e["epoch"]) : "0"; }

bool is_speed_key(const std::string& k) {
  for (const char* s : {"_runtime", "_samples_per_second", "_steps_per_second"})
    if (k.size() > std::string(s).size() && k.compare(k.size() - std::string(s).size(), std::string::npos, s) == 0)
      return true;
  return k == "epoch" || k == "step";
}

// HF's "Training results" table: one row per evaluation during training, with the last training loss before it.
std::string results_table(const nlohmann::json& history) {
  std::vector<std::string> cols;
  for (const auto& e : history)
    if (e.contains("eval_loss"))
      for (const auto& [k, v] : e.items())
        if (k.rfind("eval_", 0) == 0 && !is_speed_key(k) && k != "eval_loss" && v.is_number() &&
            std::find(cols.begin(), cols.end(), k) == cols.end())
          cols.push_back(k);
  std::ostringstream t;
  t << "| Training Loss | Epoch | Step | Validation Loss |";
  for (const auto& c : cols) t << " " << metric_title(c) << " |";
  t << "\n|:---:|:---:|:---:|:---:|";
  for (size_t i = 0; i < cols.size(); ++i) t << ":---:|";
  t << "\n";
  std::string train_loss = "No log";
  int rows = 0;
  for (const auto& e : history) {
    if (e.contains("loss")) train_loss = cell(e["loss"]);
    if (!e.contains("eval_loss")) continue;
    t << "| " << train_loss << " | " << epoch_cell(e) << " | " << e.value("step", int64_t{0})
      << " | " << cell(e["eval_loss"]) << " |";
    for (const auto& c : cols) t << " " << (e.contains(c) ? cell(e[c]) : "") << " |";
    t << "\n";
    ++rows;
  }
  if (rows > 0) return t.str();
  // No evaluation during training: the logged training losses.
  std::ostringstream u;
  u << "| Training Loss | Epoch | Step |\n|:---:|:---:|:---:|\n";
  for (const auto& e : history)
    if (e.contains("loss"))
      u << "| " << cell(e["loss"]) << " | " << epoch_cell(e) << " | " << e.value("step", int64_t{0})
        << " |\n";
  return u.str();
}

}  // namespace

std::string model_card_markdown(const ModelCard& c) {
  std::ostringstream m;
  m << "---\nlibrary_name: transformers\n";
  if (!c.base_model.empty()) m << "base_model: " << c.base_model << "\n";
  m << "tags:\n- generated_from_trainer\n- bridgetune\n";
  if (!c.dataset.empty()) m << "datasets:\n- " << c.dataset << "\n";
  m << "model-index:\n- name: " << c.model_name << "\n  results: []\n---\n\n";
  m << "# " << c.model_name << "\n\n";
  m << "This model is a fine-tuned version of ";
  if (c.base_model.empty()) m << "a randomly initialised BridgeTower";
  else if (c.base_model.find('/') != std::string::npos && c.base_model[0] != '/' && c.base_model[0] != '.')
    m << "[" << c.base_model << "](https://huggingface.co/" << c.base_model << ")";
  else m << c.base_model;
  m << " on ";
  if (c.dataset.empty()) m << "an unknown dataset";
  else m << "the " << c.dataset << (c.dataset_config.empty() ? "" : " " + c.dataset_config) << " dataset";
  m << ", trained contrastively with bridgetune.\n";
  if (c.eval_metrics.is_object() && !c.eval_metrics.empty()) {
    m << "It achieves the following results on the evaluation set:\n";
    for (const auto& [k, v] : c.eval_metrics.items())
      if (!is_speed_key(k) && v.is_number()) m << "- " << metric_title(k) << ": " << cell(v) << "\n";
  }
  m << "\n## Training procedure\n\n### Training hyperparameters\n\n"
       "The following hyperparameters were used during training:\n";
  for (const auto& [k, v] : c.hyperparameters.items())  // as Python prints them: 1e-05
    m << "- " << k << ": " << (v.is_string() ? v.get<std::string>() : v.dump()) << "\n";
  m << "\n### Training results\n\n" << results_table(c.log_history);
  m << "\n### Framework versions\n\n- bridgetune (C++/libtorch); HF-compatible outputs: trainer_state.json, "
       "all_results.json, training_args.json\n";
  return m.str();
}

}  // namespace bt::report
