#include "train/model_selection.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/error.h"

namespace bt::train {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

Selection resolve_selection(const SelectionOptions& o, int64_t eval_steps, int64_t save_steps,
                            const std::vector<std::string>& metrics) {
  Selection s;
  if (o.early_stopping_patience < 0) fail("--early_stopping_patience must be >= 0 (got ", o.early_stopping_patience, ")");
  if (!(o.early_stopping_threshold >= 0))
    fail("--early_stopping_threshold must be >= 0 (got ", o.early_stopping_threshold, ")");
  const bool early = o.early_stopping_patience > 0;
  s.metric = o.metric_for_best_model;
  if (s.metric.empty() && (o.load_best_model_at_end || early)) s.metric = "loss";  // HF's default
  if (s.metric.empty()) {
    if (o.greater_is_better >= 0) fail("--greater_is_better needs --metric_for_best_model");
    return s;
  }
  if (s.metric.rfind("eval_", 0) != 0) s.metric = "eval_" + s.metric;  // HF: "loss" means eval_loss
  s.greater_is_better = o.greater_is_better >= 0 ? o.greater_is_better == 1 : !ends_with(s.metric, "loss");
  s.load_best_at_end = o.load_best_model_at_end;
  s.patience = o.early_stopping_patience;
  s.threshold = o.early_stopping_threshold;
  if (metrics.empty())
    fail("--metric_for_best_model ", s.metric, ": no evaluation split to measure it on (give --validation_file, or "
         "--do_eval with --dataset_name)");
  if (std::find(metrics.begin(), metrics.end(), s.metric) == metrics.end())
    fail("--metric_for_best_model ", s.metric, ": this run's evaluations report ", joined(metrics),
         " (eval_matching_accuracy needs an evaluation split with caption_choices and label)");
  if (eval_steps == 0)
    fail("--metric_for_best_model ", s.metric, ": nothing evaluates during training: give --eval_strategy steps|epoch "
         "(or --eval_steps N)");
  const bool same_strategy = (eval_steps < 0) == (save_steps < 0);
  if (s.load_best_at_end && (save_steps == 0 || !same_strategy || (save_steps > 0 && save_steps % eval_steps != 0)))
    fail("--load_best_model_at_end: checkpoints must be saved where evaluations run (HF's rule): --save_strategy must "
         "equal --eval_strategy, and --save_steps (", save_steps, ") be a multiple of --eval_steps (", eval_steps, ")");
  return s;
}

bool ModelSelector::observe(const nlohmann::json& metrics, int64_t step) {
  if (!s_.active()) return false;
  auto it = metrics.find(s_.metric);
  if (it == metrics.end() || !it->is_number()) return false;  // resolve_selection() checked the name
  const double v = it->get<double>();
  if (std::isnan(v)) return false;
  auto better = [&](double a, double b) { return s_.greater_is_better ? a > b : a < b; };
  // EarlyStoppingCallback.check_metric_value, against the best before this evaluation.
  if (!best_ || (better(v, *best_) && std::fabs(v - *best_) > s_.threshold)) bad_evals_ = 0;
  else ++bad_evals_;
  const bool is_best = !best_ || better(v, *best_);
  if (is_best) best_ = v, best_step_ = step;
  if (s_.patience > 0 && bad_evals_ >= s_.patience) {
    char b[64];
    std::snprintf(b, sizeof b, "%.6g", *best_);
    stop_reason_ = str("early stopping at step ", step, ": ", s_.metric, " did not improve by more than ", s_.threshold,
                       " in ", bad_evals_, " evaluations (--early_stopping_patience ", s_.patience, "); best ", b,
                       " at step ", best_step_);
  }
  return is_best;
}

nlohmann::json ModelSelector::to_json() const {
  nlohmann::json j = {{"metric", s_.metric}, {"best_step", best_step_}, {"bad_evals", bad_evals_},
                      {"stop_reason", stop_reason_}};
  j["best_metric"] = best_ ? nlohmann::json(*best_) : nlohmann::json(nullptr);
  return j;
}

void ModelSelector::restore(const nlohmann::json& j) {
  if (!j.is_object()) return;
  if (j.value("metric", std::string()) != s_.metric) return;  // another metric: start afresh
  const auto best = j.find("best_metric");
  if (best != j.end() && best->is_number()) best_ = best->get<double>();
  best_step_ = j.value("best_step", int64_t{-1});
  bad_evals_ = j.value("bad_evals", int64_t{0});
  stop_reason_ = j.value("stop_reason", std::string());
}

std::vector<int64_t> checkpoints_to_delete(std::vector<int64_t> steps, int64_t limit, int64_t best_step) {
  if (limit <= 0) return {};
  auto best = std::find(steps.begin(), steps.end(), best_step);
  if (best != steps.end()) {
    std::rotate(best, best + 1, steps.end());  // kept as if it were the newest
    if (limit == 1 && steps.size() > 1 && best_step != *std::max_element(steps.begin(), steps.end())) limit = 2;
  }
  if (int64_t(steps.size()) <= limit) return {};
  return std::vector<int64_t>(steps.begin(), steps.end() - limit);
}

}  // namespace bt::train
