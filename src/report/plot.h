// Charts of a training run as PNG: stacked line panels sharing the x axis (loss and samples/s over steps), and
// a bar chart (bench throughput per configuration). Axes get "nice" 1-2-5 ticks with labels.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace bt::report {

struct Series {
  std::string label;
  std::vector<double> x, y;
};

struct Panel {
  std::string title;
  std::string y_label;
  std::vector<Series> series;
};

// Ticks covering [lo, hi] at a 1/2/5·10^k spacing, about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 6);
std::string tick_label(double v, double step);

void write_line_panels_png(const std::filesystem::path& path, const std::string& title, const std::string& x_label,
                           const std::vector<Panel>& panels, int width = 960, int panel_height = 300);

struct Bar {
  std::string label;  // short, shown under the bar
  double value;
  bool highlight = false;  // e.g. the in-memory upper bound
};
void write_bar_chart_png(const std::filesystem::path& path, const std::string& title, const std::string& y_label,
                         const std::vector<Bar>& bars, int width = 960, int height = 480);

}  // namespace bt::report
