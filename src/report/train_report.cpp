#include "report/train_report.h"

#include <cstdio>

#include "common/terminal.h"
#include "report/plot.h"
#include "report/run_log.h"

namespace bt::report {

void print_train_report(const TrainReport& r) {
  // Folder names and values may hold anything a file name can (ESC, BEL): every string printed escaped.
  const std::filesystem::path& out = r.output_dir;
  auto path = [&](const char* file) { return printable((file[0] ? out / file : out).string()); };
  std::printf("\n***** train results *****\n");
  for (auto& [k, v] : r.results.items())
    std::printf("  %-28s = %s\n", printable(k).c_str(),
                printable(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)).c_str());
  if (!r.demo.empty()) {
    std::printf("\n***** what training bought (held-out demo split, %lld images) *****\n", r.demo_images);
    for (const BeforeAfter& row : r.demo)
      std::printf("  %-30s %.3f -> %.3f   (chance %.3f)\n", printable(row.what).c_str(), row.before, row.after,
                  row.chance);
  }
  std::printf("\noutputs in %s:\n", path("").c_str());
  std::printf("  %-20s %s\n", "results", path("train_results.json").c_str());
  std::printf("  %-20s %s\n", "per-window metrics", path("metrics.jsonl").c_str());
  if (r.plot) std::printf("  %-20s %s\n", "plot", path("training_plot.png").c_str());
  if (r.final_model)
    std::printf("  %-20s %s (config.json, model.safetensors, tokenizer)\n", "final model", path("").c_str());
  if (!r.latest_checkpoint.empty())
    std::printf("  %-20s %s\n", "latest checkpoint", printable(r.latest_checkpoint).c_str());
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
