// A tiny anti-aliased rasteriser for the synthetic cartoons: pen strokes (thick lines, polylines, ellipses,
// cubic beziers, hatching) accumulate into an ink-coverage plane, which is then composited onto off-white
// paper with grain. Everything is a pure function of its inputs, so images are reproducible bit for bit.
#pragma once
#include <cstdint>
#include <string>
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
  // A `dry` canvas rasterises nothing: the scene code still makes every random choice, so drawing onto it
  // yields a cartoon's SceneFacts in microseconds, identical to those of the rendered image.
  Canvas(int width, int height, bool dry = false);
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
  bool dry_;
  std::vector<uint8_t> ink_;  // coverage 0..255
};

// What draw_cartoon drew, for captions that describe the picture.
struct SceneFacts {
  bool outdoor = false;  // a desert island with a palm tree; else a room
  int figures = 0;       // people, 1-3
  int hats = 0;          // how many of them wear a hat
  int windows = 0, pictures = 0, shelves = 0;  // wall items (rooms only)
  bool table = false, cup = false;             // rooms only
  // A coloured balloon painted over the drawing (SynthOptions::accents): palette index, -1 = none.
  int balloon = -1;
  int balloon_side = 0;  // 0 upper left, 1 top centre, 2 upper right
};

// The balloon palette: name and RGB of each colour.
struct AccentColour {
  const char* name;
  uint8_t rgb[3];
};
const std::vector<AccentColour>& accent_colours();

// Paints facts.balloon (if any) into an RGB image of size w x h: a filled, outlined disk with a string.
void paint_balloon(const SceneFacts& facts, int w, int h, std::vector<uint8_t>& rgb);

// Draws a whole cartoon (a room or an island, a few figures and objects, hatching) filling the canvas.
SceneFacts draw_cartoon(Canvas& canvas, Rng& rng);

// One sentence saying what `facts` show ("Two people, one in a hat, in a room with a window and a bare
// table."); `seed` picks among equivalent wordings. scene_key() is equal for two cartoons exactly when every
// fact a description can state is equal (matching distractors must differ from the truth in what they say).
std::string describe_scene(const SceneFacts& facts, uint64_t seed);
std::string scene_key(const SceneFacts& facts);

}  // namespace bt::data::synth
