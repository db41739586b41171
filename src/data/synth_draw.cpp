// Rasteriser for the synthetic cartoons (see synth_draw.h). Coverage of a stroke at a pixel is the distance
// from the pixel centre to the stroke's centre line, mapped to a one-pixel-wide anti-aliased edge.
#include "data/synth_draw.h"

#include <algorithm>
#include <cmath>

namespace bt::data::synth {

namespace {
uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

Rng::Rng(uint64_t seed) {
  s_[0] = splitmix(seed);
  s_[1] = splitmix(seed);
}

uint64_t Rng::next() {  // xorshift128+
  uint64_t a = s_[0], b = s_[1];
  s_[0] = b;
  a ^= a << 23;
  s_[1] = a ^ b ^ (a >> 17) ^ (b >> 26);
  return s_[1] + b;
}

double Rng::uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }

int Rng::range(int lo, int hi) { return lo + int(next() % uint64_t(hi - lo + 1)); }

uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t x = a;
  uint64_t h = splitmix(x);
  x = h ^ b;
  h = splitmix(x);
  x = h ^ c;
  return splitmix(x);
}

Canvas::Canvas(int width, int height, bool dry)
    : w_(width), h_(height), dry_(dry), ink_(dry ? 0 : size_t(width) * height, 0) {}

void Canvas::segment(Pt a, Pt b, float width, float ink) {
  if (dry_) return;
  float hw = width * 0.5f;
  float pad = hw + 1.f;
  int x0 = std::max(0, int(std::floor(std::min(a.x, b.x) - pad)));
  int x1 = std::min(w_ - 1, int(std::ceil(std::max(a.x, b.x) + pad)));
  int y0 = std::max(0, int(std::floor(std::min(a.y, b.y) - pad)));
  int y1 = std::min(h_ - 1, int(std::ceil(std::max(a.y, b.y) + pad)));
  if (x0 > x1 || y0 > y1) return;
  float dx = b.x - a.x, dy = b.y - a.y;
  float len2 = dx * dx + dy * dy;
  float inv = len2 > 1e-6f ? 1.f / len2 : 0.f;
  float scale = 255.f * ink;
  for (int y = y0; y <= y1; ++y) {
    uint8_t* row = ink_.data() + size_t(y) * w_;
    float py = y + 0.5f - a.y;
    for (int x = x0; x <= x1; ++x) {
      float px = x + 0.5f - a.x;
      float t = std::clamp((px * dx + py * dy) * inv, 0.f, 1.f);
      float ex = px - t * dx, ey = py - t * dy;
      float cov = hw + 0.5f - std::sqrt(ex * ex + ey * ey);
      if (cov <= 0.f) continue;
      uint8_t v = uint8_t(std::min(cov, 1.f) * scale);
      if (v > row[x]) row[x] = v;
    }
  }
}

void Canvas::line(Pt a, Pt b, float width, float ink) {
  // Long segments are split so each piece's bounding box stays small.
  float len = std::hypot(b.x - a.x, b.y - a.y);
  int n = std::max(1, int(len / 24.f));
  for (int i = 0; i < n; ++i) {
    float t0 = float(i) / n, t1 = float(i + 1) / n;
    segment({a.x + (b.x - a.x) * t0, a.y + (b.y - a.y) * t0}, {a.x + (b.x - a.x) * t1, a.y + (b.y - a.y) * t1},
            width, ink);
  }
}

void Canvas::polyline(const std::vector<Pt>& pts, float width, bool closed, float ink) {
  for (size_t i = 0; i + 1 < pts.size(); ++i) line(pts[i], pts[i + 1], width, ink);
  if (closed && pts.size() > 2) line(pts.back(), pts.front(), width, ink);
}

void Canvas::ellipse(Pt c, float rx, float ry, float width, float rotation, float ink) {
  int n = std::clamp(int((rx + ry) * 0.8f), 12, 400);
  float cr = std::cos(rotation), sr = std::sin(rotation);
  std::vector<Pt> pts(n);
  for (int i = 0; i < n; ++i) {
    float t = 6.2831853f * i / n;
    float ex = rx * std::cos(t), ey = ry * std::sin(t);
    pts[i] = {c.x + ex * cr - ey * sr, c.y + ex * sr + ey * cr};
  }
  polyline(pts, width, true, ink);
}

void Canvas::bezier(Pt p0, Pt p1, Pt p2, Pt p3, float width, float ink) {
  float approx = std::hypot(p1.x - p0.x, p1.y - p0.y) + std::hypot(p2.x - p1.x, p2.y - p1.y) +
                 std::hypot(p3.x - p2.x, p3.y - p2.y);
  int n = std::clamp(int(approx / 8.f), 4, 200);
  std::vector<Pt> pts(n + 1);
  for (int i = 0; i <= n; ++i) {
    float t = float(i) / n, u = 1.f - t;
    float a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, d = t * t * t;
    pts[i] = {a * p0.x + b * p1.x + c * p2.x + d * p3.x, a * p0.y + b * p1.y + c * p2.y + d * p3.y};
  }
  polyline(pts, width, false, ink);
}

void Canvas::disk(Pt c, float r, float ink) { segment(c, c, 2.f * r, ink); }

void Canvas::hatch(float x0, float y0, float x1, float y1, float spacing, float angle, float width, float ink) {
  if (x1 <= x0 || y1 <= y0 || spacing < 1.f) return;
  float dx = std::cos(angle), dy = std::sin(angle);  // stroke direction
  float nx = -dy, ny = dx;                            // offset direction
  float cx = (x0 + x1) * 0.5f, cy = (y0 + y1) * 0.5f;
  float reach = std::hypot(x1 - x0, y1 - y0) * 0.5f;
  for (float o = -reach; o <= reach; o += spacing) {
    // Clip the infinite line through (cx,cy)+o*n along d to the rectangle (Liang-Barsky).
    float px = cx + o * nx, py = cy + o * ny;
    float t0 = -reach, t1 = reach;
    auto clip = [&](float p, float q) {
      if (std::fabs(p) < 1e-6f) return q >= 0;
      float r = q / p;
      if (p < 0) t0 = std::max(t0, r);
      else t1 = std::min(t1, r);
      return t0 <= t1;
    };
    if (clip(-dx, px - x0) && clip(dx, x1 - px) && clip(-dy, py - y0) && clip(dy, y1 - py) && t1 > t0)
      line({px + t0 * dx, py + t0 * dy}, {px + t1 * dx, py + t1 * dy}, width, ink);
  }
}

void Canvas::to_rgb(const uint8_t paper[3], float grain, uint64_t seed, std::vector<uint8_t>& rgb) const {
  rgb.resize(size_t(w_) * h_ * 3);
  const float ink_rgb[3] = {34.f, 31.f, 29.f};
  uint32_t s = uint32_t(seed | 1);
  // Grain: a sum of two uniform draws per pixel (triangular), in luma only so the chroma planes stay cheap.
  float gscale = grain / 128.f;
  for (int y = 0; y < h_; ++y) {
    const uint8_t* in = ink_.data() + size_t(y) * w_;
    uint8_t* out = rgb.data() + size_t(y) * w_ * 3;
    for (int x = 0; x < w_; ++x) {
      s ^= s << 13;
      s ^= s >> 17;
      s ^= s << 5;
      float n = (float(s & 0xFF) + float((s >> 8) & 0xFF) - 255.f) * gscale;
      float a = in[x] * (1.f / 255.f);
      for (int c = 0; c < 3; ++c) {
        float v = paper[c] + a * (ink_rgb[c] - paper[c]) + n;
        out[3 * x + c] = uint8_t(std::clamp(v + 0.5f, 0.f, 255.f));
      }
    }
  }
}

const std::vector<AccentColour>& accent_colours() {
  static const std::vector<AccentColour> colours = {
      {"red", {210, 35, 35}},    {"orange", {240, 130, 20}}, {"yellow", {240, 215, 30}}, {"green", {40, 160, 50}},
      {"teal", {20, 160, 170}},  {"blue", {35, 70, 215}},    {"purple", {130, 45, 175}}, {"pink", {245, 120, 200}}};
  return colours;
}

void paint_balloon(const SceneFacts& facts, int w, int h, std::vector<uint8_t>& rgb) {
  if (facts.balloon < 0) return;
  const AccentColour& colour = accent_colours().at(size_t(facts.balloon));
  const float r = 0.13f * float(std::min(w, h));
  const float cx = (0.2f + 0.3f * float(facts.balloon_side)) * float(w), cy = 0.2f * float(h);
  const float outline = std::max(1.f, r * 0.08f);
  const uint8_t dark[3] = {34, 31, 29};
  auto blend = [&](int x, int y, const uint8_t* c, float a) {
    if (x < 0 || y < 0 || x >= w || y >= h || a <= 0.f) return;
    uint8_t* px = rgb.data() + (size_t(y) * size_t(w) + size_t(x)) * 3;
    for (int k = 0; k < 3; ++k) px[k] = uint8_t(std::lround(px[k] + std::min(a, 1.f) * (c[k] - px[k])));
  };
  for (int y = int(cy - r - 2); y <= int(cy + r + 2); ++y)
    for (int x = int(cx - r - 2); x <= int(cx + r + 2); ++x) {
      const float d = std::hypot(x + 0.5f - cx, y + 0.5f - cy);
      blend(x, y, colour.rgb, r - outline + 0.5f - d);                            // fill, anti-aliased edge
      blend(x, y, dark, std::min(d - (r - outline) + 0.5f, r + 0.5f - d));        // outline ring
    }
  for (int y = int(cy + r); y < int(cy + 2.2f * r) && y < h; ++y) blend(int(cx), y, dark, 1.f);  // the string
}

}  // namespace bt::data::synth
