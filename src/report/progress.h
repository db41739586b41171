// Training progress on the console. On a terminal (isatty) one line is redrawn in place: a bar, step/total,
// elapsed<ETA and the latest metrics; log() prints a line above the bar. Elsewhere (pipes, CI logs) there is no
// bar: log() lines are printed plainly, so logs stay grep-able.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace bt::report {

std::string format_duration(double seconds);  // "1:02:03" or "02:03"

class ProgressBar {
 public:
  // first_step: the step the run starts from (non-zero when resuming), so the ETA uses this session's rate.
  ProgressBar(int64_t total_steps, int64_t first_step, FILE* out, bool tty);
  static bool stdout_is_tty();

  // Redraws the bar (TTY only, at most ~10 times a second unless force).
  void update(int64_t step, double elapsed_s, const std::string& status, bool force = false);
  void log(const std::string& line);
  void finish();
  // The bar text without control characters (exposed for tests).
  std::string render(int64_t step, double elapsed_s, const std::string& status, int width) const;

 private:
  int64_t total_, first_;
  FILE* out_;
  bool tty_;
  double last_draw_ = -1;
  std::string last_line_;
};

}  // namespace bt::report
