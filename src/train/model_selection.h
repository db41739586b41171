// Model selection during training, with the Hugging Face Trainer's semantics: --metric_for_best_model,
// --greater_is_better, --load_best_model_at_end, and EarlyStoppingCallback's --early_stopping_patience /
// --early_stopping_threshold. Torch-free: the trainer feeds it each evaluation's metrics and asks it what to keep.
//
// Contract:
//  - resolve_selection() decides every default once (HF's): the metric gets the "eval_" prefix when it lacks one;
//    with --load_best_model_at_end or early stopping and no metric, the metric is eval_loss; greater_is_better
//    defaults to "the metric does not end in loss". It refuses what HF refuses (best model without evaluations at
//    the save steps) and, unlike HF, an unknown metric before training starts (naming the metrics that exist).
//  - observe() takes one evaluation: a strictly better value (no threshold, as HF's best_metric) becomes the best;
//    the patience counter resets only when the value beats the previous best by more than the threshold (HF's
//    EarlyStoppingCallback), else counts up; at `patience` it asks to stop, with the reason in stop_reason.
//  - The state round-trips through JSON (the checkpoint's resume state), so a resumed run selects and stops
//    exactly as an uninterrupted one.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace bt::train {

struct SelectionOptions {  // as the flags were given
  std::string metric_for_best_model;   // "" : none (eval_loss when needed)
  int greater_is_better = -1;          // -1 unset, 0 false, 1 true
  bool load_best_model_at_end = false;
  int64_t early_stopping_patience = 0;  // 0: no early stopping
  double early_stopping_threshold = 0;
};

struct Selection {  // resolved once
  std::string metric;  // "" : no selection at all
  bool greater_is_better = false;
  bool load_best_at_end = false;
  int64_t patience = 0;
  double threshold = 0;
  bool active() const { return !metric.empty(); }
};

// eval_steps/save_steps as given (> 0: every N steps, < 0: every epoch, 0: never during training);
// `metrics`: the eval metric keys this run's evaluations produce (empty: no evaluation split).
Selection resolve_selection(const SelectionOptions& o, int64_t eval_steps, int64_t save_steps,
                            const std::vector<std::string>& metrics);

class ModelSelector {
 public:
  explicit ModelSelector(Selection s) : s_(std::move(s)) {}
  // One evaluation at `step`; returns true when it is the new best.
  bool observe(const nlohmann::json& metrics, int64_t step);
  bool should_stop() const { return !stop_reason_.empty(); }
  const std::string& stop_reason() const { return stop_reason_; }
  std::optional<double> best_metric() const { return best_; }
  int64_t best_step() const { return best_step_; }  // -1: none yet
  const Selection& selection() const { return s_; }

  nlohmann::json to_json() const;
  void restore(const nlohmann::json& j);  // from to_json(); missing keys leave the fresh state

 private:
  Selection s_;
  std::optional<double> best_;
  int64_t best_step_ = -1, bad_evals_ = 0;
  std::string stop_reason_;
};

// The order in which rotation deletes checkpoints (oldest first), HF's _sorted_checkpoints: the best one moved
// to the end, i.e. kept as if it were the newest. `limit` 1 with a best that is not the newest keeps 2.
std::vector<int64_t> checkpoints_to_delete(std::vector<int64_t> steps_ascending, int64_t limit, int64_t best_step);

}  // namespace bt::train
