// The built-in demo's held-out scores (train/demo.h): what training bought, measured on the generated validation
// split before the first step and after the last, written to train_results.json (demo_*_before/_after) and shown by
// the end-of-run report. Only a fresh (not resumed) demo run measures them, on its main rank; otherwise every call
// here does nothing.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/torch/embed_eval.h"
#include "report/train_report.h"
#include "train/torch/train_setup.h"

namespace bt::train {

class DemoScores {
 public:
  // Scores the untrained model; returns the line to print, or nothing when this run is not a fresh demo.
  std::optional<std::string> measure_before(TrainRun& r);
  void measure_after(TrainRun& r);  // after the final evaluation, with the weights the run publishes
  void add_to(nlohmann::json& results) const;
  void add_to(report::TrainReport& report) const;

 private:
  eval::EmbedOptions options_;
  std::optional<eval::HeldOutScores> before_, after_;
};

}  // namespace bt::train
