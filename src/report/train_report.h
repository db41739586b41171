// What `train` prints and draws at its end (torch-free): the results table, the demo's before/after rows, where
// the outputs are; and training_plot.png (loss and throughput over the steps) from metrics.jsonl.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bt::report {

struct BeforeAfter {
  std::string what;
  double before = 0, after = 0, chance = 0;
};

struct TrainReport {
  nlohmann::json results;             // train_results.json's keys, printed one per line
  std::vector<BeforeAfter> demo;      // the demo's held-out scores before and after training (empty: not the demo)
  long long demo_images = 0;
  std::filesystem::path output_dir;
  bool plot = false, final_model = false;
  std::string latest_checkpoint;      // "" when none
};

void print_train_report(const TrainReport& r);

// training_plot.png beside metrics.jsonl: the loss and samples/s of every logged window.
void write_training_plot(const std::filesystem::path& metrics_jsonl, const std::filesystem::path& png,
                         const std::string& title);

}  // namespace bt::report
