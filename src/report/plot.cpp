#include "report/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "report/canvas.h"

namespace bt::report {

namespace {
constexpr Rgb kWhite{255, 255, 255}, kBlack{20, 20, 20}, kGrid{225, 225, 225}, kGray{110, 110, 110};
constexpr Rgb kColors[] = {{31, 119, 180}, {214, 39, 40}, {44, 160, 44}, {255, 127, 14}, {148, 103, 189}};

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  void finalize() {
    if (!(lo <= hi)) lo = 0, hi = 1;
    if (hi - lo < 1e-12) {
      const double pad = std::max(std::abs(lo) * 0.05, 1e-3);
      lo -= pad, hi += pad;
    }
  }
};

double tick_step(double lo, double hi, int target) {
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

void draw_axes_box(Canvas& c, int x0, int y0, int x1, int y1) {
  c.line(x0, y0, x1, y0, kBlack);
  c.line(x0, y1, x1, y1, kBlack);
  c.line(x0, y0, x0, y1, kBlack);
  c.line(x1, y0, x1, y1, kBlack);
}
// Centered; a title too wide for the canvas at the normal size is drawn at half size.
void draw_title(Canvas& c, const std::string& title, int y) {
  const int scale = Canvas::text_width(title, 2) <= c.width() - 20 ? 2 : 1;
  c.text((c.width() - Canvas::text_width(title, scale)) / 2, y, title, kBlack, scale);
}
}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> t;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return t;
  const double step = tick_step(lo, hi, target);
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
    t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    if (t.size() > 100) break;
  }
  return t;
}

std::string tick_label(double v, double step) {
  char buf[32];
  const double a = std::abs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-3)) {
    std::snprintf(buf, sizeof buf, "%.1e", v);
  } else {
    const int dec = step >= 1 ? 0 : std::min(6, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
    std::snprintf(buf, sizeof buf, "%.*f", dec, v);
  }
  return buf;
}

namespace {

// The y axis of a chart spanning x0..x1: a grid line, a tick and a label (at the ticks' precision) per tick; py maps
// a value to its pixel row.
template <class Py>
void draw_y_ticks(Canvas& c, const std::vector<double>& ticks, int x0, int x1, const Py& py) {
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double v : ticks) {
    const int y = static_cast<int>(std::lround(py(v)));
    c.line(x0, y, x1, y, kGrid);
    c.line(x0 - 5, y, x0, y, kBlack);
    const std::string l = tick_label(v, step);
    c.text(x0 - 8 - Canvas::text_width(l, 2), y - 7, l, kBlack, 2);
  }
}

}  // namespace

void write_line_panels_png(const std::filesystem::path& path, const std::string& title, const std::string& x_label,
                           const std::vector<Panel>& panels, int width, int panel_height) {
  const int top = 40, left = 100, right = 30, gap = 50, bottom = 60;
  const int n = std::max<int>(1, static_cast<int>(panels.size()));
  const int height = top + n * panel_height + (n - 1) * gap + bottom;
  Canvas c(width, height, kWhite);
  draw_title(c, title, 12);

  Range xr;
  for (const auto& p : panels)
    for (const auto& s : p.series)
      for (double x : s.x) xr.add(x);
  xr.finalize();
  const auto xt = nice_ticks(xr.lo, xr.hi, 8);
  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1;

  for (int pi = 0; pi < static_cast<int>(panels.size()); ++pi) {
    const Panel& p = panels[pi];
    const int y0 = top + pi * (panel_height + gap) + 16, y1 = top + pi * (panel_height + gap) + panel_height;
    const int x0 = left, x1 = width - right;
    Range yr;
    for (const auto& s : p.series)
      for (double y : s.y) yr.add(y);
    yr.finalize();
    const double pad = (yr.hi - yr.lo) * 0.05;
    yr.lo -= pad, yr.hi += pad;
    auto px = [&](double x) { return x0 + (x - xr.lo) / (xr.hi - xr.lo) * (x1 - x0); };
    auto py = [&](double y) { return y1 - (y - yr.lo) / (yr.hi - yr.lo) * (y1 - y0); };

    draw_y_ticks(c, nice_ticks(yr.lo, yr.hi, 5), x0, x1, py);
    for (double v : xt) {
      const int x = static_cast<int>(std::lround(px(v)));
      c.line(x, y0, x, y1, kGrid);
      c.line(x, y1, x, y1 + 5, kBlack);
      const std::string l = tick_label(v, xstep);
      c.text(x - Canvas::text_width(l, 2) / 2, y1 + 9, l, kBlack, 2);
    }
    draw_axes_box(c, x0, y0, x1, y1);
    c.text(x0, y0 - 18, p.title, kBlack, 2);
    c.text(14, (y0 + y1) / 2 + Canvas::text_width(p.y_label, 2) / 2, p.y_label, kGray, 2, true);

    for (size_t si = 0; si < p.series.size(); ++si) {
      const Series& s = p.series[si];
      const Rgb col = kColors[si % 5];
      const size_t m = std::min(s.x.size(), s.y.size());
      for (size_t i = 1; i < m; ++i) c.line(px(s.x[i - 1]), py(s.y[i - 1]), px(s.x[i]), py(s.y[i]), col, 2);
      if (m == 1) c.fill_rect(int(px(s.x[0])) - 2, int(py(s.y[0])) - 2, int(px(s.x[0])) + 2, int(py(s.y[0])) + 2, col);
      if (!s.label.empty()) {
        const int lx = x1 - 10 - Canvas::text_width(s.label, 2);
        const int ly = y0 + 8 + static_cast<int>(si) * 20;
        c.fill_rect(lx - 26, ly + 6, lx - 8, ly + 8, col);
        c.text(lx, ly, s.label, col, 2);
      }
    }
  }
  c.text((width - Canvas::text_width(x_label, 2)) / 2, height - 24, x_label, kBlack, 2);
  c.write_png(path);
}

void write_bar_chart_png(const std::filesystem::path& path, const std::string& title, const std::string& y_label,
                         const std::vector<Bar>& bars, int width, int height) {
  Canvas c(width, height, kWhite);
  const int top = 50, left = 100, right = 30, bottom = 70;
  const int x0 = left, x1 = width - right, y0 = top, y1 = height - bottom;
  draw_title(c, title, 14);
  double hi = 0;
  for (const auto& b : bars)
    if (std::isfinite(b.value)) hi = std::max(hi, b.value);
  if (hi <= 0) hi = 1;
  hi *= 1.12;  // room for the value labels
  auto py = [&](double v) { return y1 - v / hi * (y1 - y0); };
  draw_y_ticks(c, nice_ticks(0, hi, 6), x0, x1, py);
  draw_axes_box(c, x0, y0, x1, y1);
  c.text(14, (y0 + y1) / 2 + Canvas::text_width(y_label, 2) / 2, y_label, kGray, 2, true);
  const int n = std::max<int>(1, static_cast<int>(bars.size()));
  const double slot = double(x1 - x0) / n;
  for (int i = 0; i < static_cast<int>(bars.size()); ++i) {
    const Bar& b = bars[i];
    const int bx0 = static_cast<int>(x0 + slot * i + slot * 0.18), bx1 = static_cast<int>(x0 + slot * (i + 1) - slot * 0.18);
    const double v = std::isfinite(b.value) ? std::max(0.0, b.value) : 0.0;
    const int by = static_cast<int>(std::lround(py(v)));
    c.fill_rect(bx0, by, bx1, y1 - 1, b.highlight ? kColors[2] : kColors[0]);
    char val[32];
    std::snprintf(val, sizeof val, v >= 100 ? "%.0f" : "%.1f", v);
    c.text((bx0 + bx1) / 2 - Canvas::text_width(val, 2) / 2, by - 18, val, kBlack, 2);
    int scale = 2;
    if (Canvas::text_width(b.label, 2) > slot - 4) scale = 1;
    c.text((bx0 + bx1) / 2 - Canvas::text_width(b.label, scale) / 2, y1 + 10, b.label, kBlack, scale);
  }
  c.write_png(path);
}

}  // namespace bt::report
