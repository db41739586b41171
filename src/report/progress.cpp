#include "report/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/terminal.h"

namespace bt::report {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  auto s = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60),
                  (long long)(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld", (long long)(s / 60), (long long)(s % 60));
  return buf;
}

ProgressBar::ProgressBar(int64_t total_steps, int64_t first_step, FILE* out, bool tty)
    : total_(std::max<int64_t>(1, total_steps)), first_(first_step), out_(out), tty_(tty) {}

bool ProgressBar::stdout_is_tty() { return isatty(STDOUT_FILENO) == 1; }

std::string ProgressBar::render(int64_t step, double elapsed_s, const std::string& status, int width) const {
  const double frac = std::clamp(static_cast<double>(step) / static_cast<double>(total_), 0.0, 1.0);
  const int64_t done_here = step - first_;
  const double eta = done_here > 0 ? elapsed_s / static_cast<double>(done_here) * static_cast<double>(total_ - step)
                                   : NAN;
  std::string tail = str(" ", step, "/", total_, " [", format_duration(elapsed_s), "<", format_duration(eta), "]");
  if (!status.empty()) tail += " " + status;
  const int bar_w = std::clamp(width - static_cast<int>(tail.size()) - 7, 10, 40);
  const int filled = static_cast<int>(frac * bar_w);
  char pct[8];
  std::snprintf(pct, sizeof pct, "%3d%%", static_cast<int>(frac * 100));
  std::string line = std::string(pct) + " |" + std::string(filled, '#') + std::string(bar_w - filled, ' ') + "|" + tail;
  if (static_cast<int>(line.size()) > width) line.resize(width);
  return line;
}

void ProgressBar::update(int64_t step, double elapsed_s, const std::string& status, bool force) {
  if (!tty_) return;
  if (!force && last_draw_ >= 0 && elapsed_s - last_draw_ < 0.1 && step < total_) return;
  last_draw_ = elapsed_s;
  int width = 100;
  winsize ws{};
  if (ioctl(fileno(out_), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20) width = ws.ws_col - 1;
  last_line_ = render(step, elapsed_s, printable(status), width);
  std::fprintf(out_, "\r\033[K%s", last_line_.c_str());
  std::fflush(out_);
}

void ProgressBar::log(const std::string& text) {
  // Log lines may quote names and captions from the data (e.g. skipped samples): escape control bytes.
  const std::string line = printable(text);
  if (tty_) {
    std::fprintf(out_, "\r\033[K%s\n%s", line.c_str(), last_line_.c_str());
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void ProgressBar::finish() {
  if (tty_ && !last_line_.empty()) std::fprintf(out_, "\n");
  last_line_.clear();
  std::fflush(out_);
}

}  // namespace bt::report
