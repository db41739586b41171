// A tiny anti-aliased rasteriser for the synthetic cartoons: pen strokes (thick lines, polylines, ellipses,
// cubic beziers, hatching) accumulate into an ink-coverage plane, which is then composited onto off-white
// paper with grain. Everything is a pure function of its inputs, so images are reproducible bit for bit.
#pragma once
#include <cstdint>
#include <vector>

namespace bt::data::synth {

// splitmix64-seeded xoshiro-style generator; our own so the bytes do not depend on the standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  double uniform();                          // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  int range(int lo, int hi);                 // [lo, hi] inclusive
  bool chance(double p) { return uniform() < p; }

 private:
  uint64_t s_[2];
};

// Mixes values into a seed (for per-image / per-row streams).
uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c = 0);

struct Pt {
  float x, y;
};

class Canvas {
 public:
  Canvas(int width, int height);
  int width() const { return w_; }
  int height() const { return h_; }

  // Strokes of pen width `width` px; `ink` in (0, 1] is the darkness.
  void line(Pt a, Pt b, float width, float ink = 1.f);
  void polyline(const std::vector<Pt>& pts, float width, bool closed = false, float ink = 1.f);
  void ellipse(Pt c, float rx, float ry, float width, float rotation = 0.f, float ink = 1.f);
  void bezier(Pt p0, Pt p1, Pt p2, Pt p3, float width, float ink = 1.f);
  void disk(Pt c, float r, float ink = 1.f);
  // Parallel strokes at `angle` (radians) every `spacing` px, clipped to the rectangle [x0,x1]x[y0,y1].
  void hatch(float x0, float y0, float x1, float y1, float spacing, float angle, float width, float ink = 0.8f);

  // Composites the ink onto paper of colour `paper` (RGB) with grain of amplitude `grain` levels.
  void to_rgb(const uint8_t paper[3], float grain, uint64_t seed, std::vector<uint8_t>& rgb) const;
  const std::vector<uint8_t>& ink() const { return ink_; }

 private:
  void segment(Pt a, Pt b, float width, float ink);
  int w_, h_;
  std::vector<uint8_t> ink_;  // coverage 0..255
};

// Draws a whole cartoon (a room or an island, a few figures and objects, hatching) filling the canvas.
void draw_cartoon(Canvas& canvas, Rng& rng);

}  // namespace bt::data::synth
