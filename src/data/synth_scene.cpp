// Scene composition for the synthetic cartoons: a room (floor, wall, window/frame/door, furniture) or a desert
// island (mound, palm, waves), one to three figures, and hatched shading, all with hand-drawn wobble.
#include <algorithm>
#include <cmath>

#include "data/synth_draw.h"

namespace bt::data::synth {

namespace {

// Every random draw is a statement of its own: C++ leaves the order of a call's arguments to the compiler, so two
// draws in one call's arguments would give other pictures from the same seed under another compiler. The order
// below is the one gcc took when the draws were arguments (right to left), so the data of a seed is unchanged.
struct Pen {
  Canvas& c;
  Rng& r;
  float unit;  // stroke width scale: ~1 px per 300 px of the short side
  float w() { return unit * float(r.uniform(2.2, 3.6)); }
  float thin() { return unit * float(r.uniform(1.0, 1.6)); }
  Pt jit(Pt p, float a) { return {p.x + float(r.uniform(-a, a)), p.y + float(r.uniform(-a, a))}; }
  // A wobbly "hand-drawn" straight line: a bezier with slightly displaced control points.
  void wline(Pt a, Pt b, float width) {
    float len = std::hypot(b.x - a.x, b.y - a.y);
    float wob = std::min(6.f * unit, len * 0.03f);
    const Pt second = jit({a.x + 2 * (b.x - a.x) / 3, a.y + 2 * (b.y - a.y) / 3}, wob);
    const Pt first = jit({a.x + (b.x - a.x) / 3, a.y + (b.y - a.y) / 3}, wob);
    c.bezier(a, first, second, b, width);
  }
  void rect(float x0, float y0, float x1, float y1, float width) {
    wline({x0, y0}, {x1, y0}, width);
    wline({x1, y0}, {x1, y1}, width);
    wline({x1, y1}, {x0, y1}, width);
    wline({x0, y1}, {x0, y0}, width);
  }
};

// Returns whether the figure wears a hat.
bool figure(Pen& p, float x, float floor, float height) {
  Rng& r = p.r;
  float head = height * float(r.uniform(0.08, 0.11));
  float hy = floor - height + head;
  float lean = float(r.uniform(-0.08, 0.08)) * height;
  const float tilt = float(r.uniform(-0.3, 0.3));
  const float face_w = p.w();
  p.c.ellipse({x + lean, hy}, head * float(r.uniform(0.8, 1.0)), head, face_w, tilt);
  // Face: eyes, nose, mouth.
  float dir = r.chance(0.5) ? 1.f : -1.f;
  p.c.disk({x + lean + dir * head * 0.3f, hy - head * 0.15f}, p.unit * 1.6f);
  p.c.disk({x + lean + dir * head * 0.65f, hy - head * 0.12f}, p.unit * 1.6f);
  p.c.bezier({x + lean + dir * head * 0.6f, hy}, {x + lean + dir * head * 1.2f, hy + head * 0.2f},
             {x + lean + dir * head * 0.9f, hy + head * 0.35f}, {x + lean + dir * head * 0.6f, hy + head * 0.3f},
             p.thin());
  p.c.line({x + lean + dir * head * 0.2f, hy + head * 0.6f}, {x + lean + dir * head * 0.6f, hy + head * 0.55f},
           p.thin());
  const bool hat = r.chance(0.4);
  if (hat) {
    p.rect(x + lean - head, hy - head * 1.9f, x + lean + head, hy - head * 0.8f, p.w());
    p.wline({x + lean - head * 1.5f, hy - head * 0.8f}, {x + lean + head * 1.5f, hy - head * 0.8f}, p.w());
  } else {  // hair
    p.c.hatch(x + lean - head * 0.8f, hy - head, x + lean + head * 0.8f, hy - head * 0.5f, p.unit * 4.f, 1.2f,
              p.thin());
  }
  // Torso: two curves from the shoulders to the hips.
  float sy = hy + head * 1.2f, hip = floor - height * 0.45f, sw = head * float(r.uniform(1.0, 1.6));
  float belly = head * float(r.uniform(0.2, 1.2));
  p.c.bezier({x + lean * 0.6f - sw, sy}, {x - sw - belly, sy + (hip - sy) * 0.3f}, {x - sw - belly * 0.5f, hip},
             {x - sw * 0.8f, hip}, p.w());
  p.c.bezier({x + lean * 0.6f + sw, sy}, {x + sw + belly, sy + (hip - sy) * 0.3f}, {x + sw + belly * 0.5f, hip},
             {x + sw * 0.8f, hip}, p.w());
  p.wline({x - sw * 0.8f, hip}, {x + sw * 0.8f, hip}, p.w());
  if (r.chance(0.5))  // tie or buttons
    p.c.hatch(x - head * 0.15f, sy + head * 0.2f, x + head * 0.15f, hip - head * 0.3f, p.unit * 5.f, 0.3f,
              p.thin());
  // Arms.
  for (float side : {-1.f, 1.f}) {
    Pt sh{x + lean * 0.6f + side * sw, sy + head * 0.2f};
    Pt hand{x + side * (sw + head * float(r.uniform(0.5, 2.5))), sy + float(r.uniform(-0.3, 1.0)) * (hip - sy)};
    const float arm_w = p.w();
    const Pt wrist = p.jit(hand, head * 0.3f);
    const Pt elbow = p.jit({sh.x + side * head, sh.y + head}, head * 0.5f);
    p.c.bezier(sh, elbow, wrist, hand, arm_w);
    p.c.ellipse(hand, head * 0.22f, head * 0.18f, p.thin());
  }
  // Legs and shoes.
  for (float side : {-1.f, 1.f}) {
    Pt top{x + side * sw * 0.45f, hip};
    Pt foot{x + side * sw * float(r.uniform(0.3, 0.9)), floor};
    p.wline({top.x - sw * 0.25f, top.y}, {foot.x - sw * 0.2f, foot.y - head * 0.2f}, p.w());
    p.wline({top.x + sw * 0.25f, top.y}, {foot.x + sw * 0.2f, foot.y - head * 0.2f}, p.w());
    p.c.ellipse({foot.x + side * head * 0.2f, foot.y - head * 0.1f}, head * 0.45f, head * 0.16f, p.w());
  }
  // Cast shadow.
  p.c.hatch(x - sw * 2.f, floor - head * 0.05f, x + sw * 2.2f, floor + head * 0.35f, p.unit * 4.5f, -0.5f, p.thin(),
            0.6f);
  return hat;
}

void room(Pen& p, float W, float H, float floor, SceneFacts& facts) {
  Rng& r = p.r;
  const float floor_w = p.w();
  p.wline({0, floor}, {W, floor + float(r.uniform(-0.02, 0.02)) * H}, floor_w);
  if (r.chance(0.6)) {  // a corner of the room
    const float corner_w = p.w();
    const float bottom = W * float(r.uniform(0.1, 0.9));
    p.wline({W * float(r.uniform(0.1, 0.9)), 0}, {bottom, floor}, corner_w);
  }
  int items = r.range(1, 3);
  for (int i = 0; i < items; ++i) {
    float x0 = W * float(r.uniform(0.05, 0.7)), y0 = H * float(r.uniform(0.08, 0.3));
    float x1 = x0 + W * float(r.uniform(0.12, 0.25)), y1 = y0 + H * float(r.uniform(0.12, 0.3));
    y1 = std::min(y1, floor - H * 0.05f);
    int kind = r.range(0, 2);
    p.rect(x0, y0, x1, y1, p.w());
    ++(kind == 0 ? facts.windows : kind == 1 ? facts.pictures : facts.shelves);
    if (kind == 0) {  // window with a cross and a hatched sky
      p.wline({(x0 + x1) / 2, y0}, {(x0 + x1) / 2, y1}, p.w());
      p.wline({x0, (y0 + y1) / 2}, {x1, (y0 + y1) / 2}, p.w());
      const float sky_w = p.thin();
      p.c.hatch(x0 + 4, y0 + 4, x1 - 4, y1 - 4, p.unit * float(r.uniform(6, 12)), 0.785f, sky_w, 0.5f);
    } else if (kind == 1) {  // framed picture: a doodle inside
      p.rect(x0 + (x1 - x0) * 0.1f, y0 + (y1 - y0) * 0.1f, x1 - (x1 - x0) * 0.1f, y1 - (y1 - y0) * 0.1f, p.thin());
      const float doodle_w = p.thin();
      const Pt low = p.jit({(x0 + x1) / 2, y1}, 10);
      const Pt high = p.jit({(x0 + x1) / 2, y0}, 10);
      p.c.bezier({x0 + (x1 - x0) * 0.2f, y1 - (y1 - y0) * 0.3f}, high, low, {x1 - (x1 - x0) * 0.2f, y0 + (y1 - y0) * 0.3f},
                 doodle_w);
    } else {  // bookshelf
      for (float y = y0 + (y1 - y0) / 3; y < y1; y += (y1 - y0) / 3) p.wline({x0, y}, {x1, y}, p.thin());
      p.c.hatch(x0 + 2, y0 + 2, x1 - 2, y1 - 2, p.unit * 7.f, 1.5708f, p.thin(), 0.7f);
    }
  }
  facts.table = r.chance(0.7);
  if (facts.table) {  // table or desk
    float tx = W * float(r.uniform(0.1, 0.6)), tw = W * float(r.uniform(0.2, 0.35)), ty = floor - H * 0.18f;
    p.wline({tx, ty}, {tx + tw, ty}, p.w());
    p.wline({tx - tw * 0.05f, ty + H * 0.02f}, {tx + tw * 1.05f, ty + H * 0.02f}, p.w());
    p.wline({tx + tw * 0.08f, ty + H * 0.02f}, {tx + tw * 0.08f, floor}, p.w());
    p.wline({tx + tw * 0.92f, ty + H * 0.02f}, {tx + tw * 0.92f, floor}, p.w());
    facts.cup = r.chance(0.6);
    if (facts.cup) p.c.ellipse({tx + tw * 0.5f, ty - H * 0.03f}, tw * 0.08f, H * 0.03f, p.w());
  }
}

void island(Pen& p, float W, float H, float floor) {
  Rng& r = p.r;
  float cx = W * float(r.uniform(0.35, 0.65)), half = W * float(r.uniform(0.25, 0.4));
  p.c.bezier({cx - half, floor}, {cx - half * 0.5f, floor - H * 0.12f}, {cx + half * 0.5f, floor - H * 0.12f},
             {cx + half, floor}, p.w());
  for (int row = 0; row < 4; ++row) {  // waves
    float y = floor + H * (0.03f + 0.06f * row);
    std::vector<Pt> wave;
    for (float x = 0; x <= W; x += 6.f) wave.push_back({x, y + std::sin(x * 0.03f + row) * p.unit * 5.f});
    p.c.polyline(wave, p.thin(), false, 0.8f);
  }
  float px = cx + half * float(r.uniform(-0.5, 0.5)), base = floor - H * 0.08f, top = base - H * 0.45f;
  float bend = W * float(r.uniform(-0.08, 0.08));
  p.c.bezier({px - 8 * p.unit, base}, {px + bend, base - H * 0.2f}, {px + bend, top + H * 0.1f}, {px + bend, top}, p.w());
  p.c.bezier({px + 8 * p.unit, base}, {px + bend + 12 * p.unit, base - H * 0.2f}, {px + bend + 8 * p.unit, top + H * 0.1f},
             {px + bend + 6 * p.unit, top}, p.w());
  for (int k = 0; k < 6; ++k) {  // fronds
    float a = float(k) / 5.f * 3.1416f + float(r.uniform(-0.2, 0.2));
    Pt tip{px + bend + std::cos(a) * W * 0.15f, top + std::sin(-a) * H * 0.06f + H * 0.07f};
    p.c.bezier({px + bend, top}, {px + bend + std::cos(a) * W * 0.06f, top - H * 0.06f}, tip, tip, p.w());
  }
}

}  // namespace

SceneFacts draw_cartoon(Canvas& canvas, Rng& rng) {
  float W = float(canvas.width()), H = float(canvas.height());
  Pen pen{canvas, rng, std::min(W, H) / 300.f};
  SceneFacts facts;
  facts.outdoor = rng.chance(0.3);
  float floor = H * float(rng.uniform(0.72, 0.85));
  if (facts.outdoor) island(pen, W, H, floor);
  else room(pen, W, H, floor, facts);
  facts.figures = rng.range(1, 3);
  float fh = std::min(H * 0.6f, floor * 0.85f);
  for (int i = 0; i < facts.figures; ++i) {
    float x = W * (float(i) + 0.5f) / float(facts.figures) + W * float(rng.uniform(-0.08, 0.08));
    facts.hats += figure(pen, x, facts.outdoor ? floor - H * 0.06f : floor, fh * float(rng.uniform(0.75, 1.0)));
  }
  // A signature scrawl in a corner, as cartoonists do.
  float sx = rng.chance(0.5) ? W * 0.85f : W * 0.05f, sy = H * 0.95f;
  canvas.bezier({sx, sy}, {sx + W * 0.02f, sy - H * 0.02f}, {sx + W * 0.04f, sy + H * 0.02f}, {sx + W * 0.07f, sy},
                pen.thin());
  return facts;
}

}  // namespace bt::data::synth
