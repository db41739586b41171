// The files the Hugging Face Trainer (and its example scripts) leave in output_dir, written beside bridgetune's
// own (metrics.jsonl, train_results.json's extra keys, the plot) so HF tools and people find what they look for.
// Torch-free: the trainer, the checkpoint writer and the recipe (train/recipe.h) call these.
//
//   trainer_state.json    HF's TrainerState schema (transformers 4.4x field set): log_history built from the
//                         run's metrics.jsonl (training windows -> {loss, grad_norm, learning_rate, epoch, step};
//                         eval/test/train-summary records -> their keys + epoch + step), global_step, epoch,
//                         max_steps, num_train_epochs, logging/eval/save_steps, train_batch_size, best_metric,
//                         best_model_checkpoint (null without --metric_for_best_model), ... No other key: HF loads it
//                         as TrainerState(**json), and older versions have no best_global_step.
//   <split>_results.json  HF's save_metrics(split, metrics): the split's metrics; all_results.json gathers the
//                         splits of the run (merged into the file already there, as HF does).
//   training_args.json    the run's arguments as JSON (HF pickles them to training_args.bin; JSON is readable).
//   README.md             a model card: base model, dataset, hyper-parameters, results, training-results table.
#pragma once
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bt::report {

struct HfStateInfo {
  int64_t global_step = 0, max_steps = 0, steps_per_epoch = 0;  // steps_per_epoch 0: unknown (no epoch keys)
  int64_t logging_steps = 500, eval_steps = 0, save_steps = 0, train_batch_size = 8;
  double num_train_epochs = 3;
  // Model selection (train/model_selection.h): null / "" / -1 when none.
  nlohmann::json best_metric = nullptr;
  std::string best_model_checkpoint;
  bool stopped_early = false;  // early stopping ended the run
  double total_flos = 0;       // HF's total_flos (model/flops.h: hf_total_flos); 0 where not counted
  double epoch() const { return steps_per_epoch > 0 ? double(global_step) / double(steps_per_epoch) : 0.0; }
};

// From the settings the trainer keeps in its resume state (missing keys: defaults).
HfStateInfo hf_state_of_settings(const nlohmann::json& settings, int64_t global_step);

// The best model's fields from model selection's state (ModelSelector::to_json; null: none): best_metric, and
// best_model_checkpoint = output_dir/checkpoint-<best step> when that checkpoint exists or is the one being
// written (`saving_step`), as HF sets it when it saves.
void apply_selection(HfStateInfo& info, const nlohmann::json& selection, const std::filesystem::path& output_dir,
                     int64_t saving_step);

// HF log_history entries of metrics.jsonl records with step <= through_step.
nlohmann::json hf_log_history(const std::vector<nlohmann::json>& records, int64_t through_step,
                              int64_t steps_per_epoch);

nlohmann::ordered_json hf_trainer_state(const HfStateInfo& info, const nlohmann::json& log_history);

// trainer_state.json at `path` (atomically) with the log_history of the metrics.jsonl at `metrics_jsonl`.
void write_hf_trainer_state(const std::filesystem::path& path, const std::filesystem::path& metrics_jsonl,
                            const HfStateInfo& info);

// HF's save_metrics(split, metrics, combined=True): output_dir/<split>_results.json holds `metrics` merged over what
// the file held, and all_results.json gathers every split's keys. `own`: keys of the split file only, beside HF's
// (train: bridgetune's throughput, losses, ...; where a name is in both, `metrics` wins); each file is written once.
void save_hf_metrics(const std::filesystem::path& output_dir, const std::string& split, const nlohmann::json& metrics,
                     const nlohmann::json& own = nlohmann::json::object());

struct ModelCard {
  std::string model_name;      // the output folder's name
  std::string base_model;      // hub id or folder ("": trained from a random-init preset)
  std::string dataset, dataset_config;
  nlohmann::ordered_json hyperparameters;  // name -> value, in order
  nlohmann::json eval_metrics;             // the final eval_* metrics (may be empty)
  nlohmann::json log_history;              // for the training-results table
};
std::string model_card_markdown(const ModelCard& card);

}  // namespace bt::report
