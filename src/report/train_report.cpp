#include "report/train_report.h"

#include <cstdio>

#include "report/plot.h"
#include "report/run_log.h"

namespace bt::report {

void print_train_report(const TrainReport& r) {
  const std::filesystem::path& out = r.output_dir;
  std::printf("\n***** train results *****\n");
  for (auto& [k, v] : r.results.items()) std::printf("  %-28s = %s\n", k.c_str(), v.dump().c_str());
  if (!r.demo.empty()) {
    std::printf("\n***** what training bought (held-out demo split, %lld images) *****\n", r.demo_images);
    for (const BeforeAfter& row : r.demo)
      std::printf("  %-30s %.3f -> %.3f   (chance %.3f)\n", row.what.c_str(), row.before, row.after, row.chance);
  }
  std::printf("\noutputs in %s:\n", out.c_str());
  std::printf("  %-20s %s\n", "results", (out / "train_results.json").c_str());
  std::printf("  %-20s %s\n", "per-window metrics", (out / "metrics.jsonl").c_str());
  if (r.plot) std::printf("  %-20s %s\n", "plot", (out / "training_plot.png").c_str());
  if (r.final_model) std::printf("  %-20s %s (config.json, model.safetensors, tokenizer)\n", "final model", out.c_str());
  if (!r.latest_checkpoint.empty()) std::printf("  %-20s %s\n", "latest checkpoint", r.latest_checkpoint.c_str());
  std::fflush(stdout);
}

void write_training_plot(const std::filesystem::path& metrics_jsonl, const std::filesystem::path& png,
                         const std::string& title) {
  Series loss{"loss", {}, {}}, sps{"samples/s", {}, {}};
  for (const auto& w : read_window_records(metrics_jsonl)) {
    loss.x.push_back(static_cast<double>(w.step)), loss.y.push_back(w.loss);
    sps.x.push_back(static_cast<double>(w.step)), sps.y.push_back(w.samples_per_s);
  }
  write_line_panels_png(png, title, "step", {{"training loss", "loss", {loss}}, {"throughput", "samples/s", {sps}}});
}

}  // namespace bt::report
