// Test batches: random (smooth + noisy) RGB images of assorted sizes packed into one buffer, with a mix of
// eval, crop (RandomResizedCrop-like) and float-box specs, shared by the CPU and GPU tests.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cuda/resize_plan.h"
#include "naive_pillow.h"

namespace bt::cuda::test {

inline Image random_image(int w, int h, uint32_t seed) {
  std::mt19937 rng(seed);
  Image im{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  std::uniform_int_distribution<int> noise(-40, 40);
  const double fx = 0.05 + (seed % 7) * 0.03, fy = 0.04 + (seed % 5) * 0.05;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        int v = static_cast<int>(128 + 100 * std::sin(fx * x + c) * std::cos(fy * y - c)) + noise(rng);
        if ((x / 7 + y / 5) % 11 == 0) v = c == 0 ? 255 : 0;  // hard edges exercise the clipping
        im.px[(static_cast<size_t>(y) * w + x) * 3 + c] = static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
      }
  return im;
}

// What the CPU path is asked to do with one sample (the independent description of a SampleSpec).
struct Desc {
  enum Kind { kEval, kCrop, kBox } kind = kEval;
  int left = 0, top = 0, cw = 0, ch = 0;  // kCrop
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // kBox
  bool flip = false;
};

// The expected uint8 image_size^2 result, computed the plain way.
inline Image expected(const Image& im, const Desc& d, int n) {
  Image out;
  if (d.kind == Desc::kEval) {
    const bool w_short = im.w <= im.h;
    const int s = w_short ? im.w : im.h, l = w_short ? im.h : im.w;
    const int nl = static_cast<int>(static_cast<double>(n) * l / s);
    const int nw = w_short ? n : nl, nh = w_short ? nl : n;
    const Image r = pillow_resize(im, nw, nh, 0, 0, im.w, im.h);
    out = crop(r, static_cast<int>(std::nearbyint((nw - n) / 2.0)), static_cast<int>(std::nearbyint((nh - n) / 2.0)), n, n);
  } else if (d.kind == Desc::kCrop) {
    const Image c = crop(im, d.left, d.top, d.cw, d.ch);
    out = pillow_resize(c, n, n, 0, 0, d.cw, d.ch);
  } else {
    out = pillow_resize(im, n, n, d.x0, d.y0, d.x1, d.y1);
  }
  return d.flip ? hflip(out) : out;
}

struct Batch {
  std::vector<Desc> descs;
  std::vector<Image> images;
  std::vector<SampleSpec> specs;
  std::vector<uint64_t> offsets;
  std::vector<uint8_t> packed;
};

inline void pack(Batch& b) {
  b.offsets.clear();
  b.packed.clear();
  for (const Image& im : b.images) {
    b.offsets.push_back(b.packed.size());
    b.packed.insert(b.packed.end(), im.px.begin(), im.px.end());
    b.packed.resize((b.packed.size() + 7) & ~size_t{7}, 0xAB);  // padding between samples must not matter
  }
}

// A deterministic mixed batch; `big` uses ~740x700 images like the benchmark data.
inline Batch mixed_batch(int image_size, int count, uint32_t seed, bool big) {
  Batch b;
  std::mt19937 rng(seed);
  for (int i = 0; i < count; ++i) {
    int w, h;
    if (big) {
      w = 700 + static_cast<int>(rng() % 80);
      h = 660 + static_cast<int>(rng() % 80);
    } else {
      w = 5 + static_cast<int>(rng() % (3 * image_size));
      h = 5 + static_cast<int>(rng() % (3 * image_size));
    }
    b.images.push_back(random_image(w, h, seed * 131 + i));
    const bool flip = rng() % 2;
    switch (i % 3) {
      case 0:
        b.specs.push_back(eval_spec(w, h, image_size));
        b.descs.push_back(Desc{});
        break;
      case 1: {
        const int cw = 1 + static_cast<int>(rng() % w), ch = 1 + static_cast<int>(rng() % h);
        const int left = static_cast<int>(rng() % (w - cw + 1)), top = static_cast<int>(rng() % (h - ch + 1));
        b.specs.push_back(crop_spec(w, h, top, left, ch, cw, image_size, flip));
        b.descs.push_back(Desc{Desc::kCrop, left, top, cw, ch, 0, 0, 0, 0, flip});
        break;
      }
      default: {
        std::uniform_real_distribution<double> u(0.0, 1.0);
        const double x0 = u(rng) * w * 0.5, y0 = u(rng) * h * 0.5;
        const double x1 = x0 + (w - x0) * (0.1 + 0.9 * u(rng)), y1 = y0 + (h - y0) * (0.1 + 0.9 * u(rng));
        b.specs.push_back(box_spec(w, h, x0, y0, x1, y1, image_size, flip));
        b.descs.push_back(Desc{Desc::kBox, 0, 0, 0, 0, x0, y0, x1, y1, flip});
      }
    }
  }
  pack(b);
  return b;
}

// Colour jitter on some samples (the train plan's factors): none, brightness only, all three, contrast +
// saturation, in turn; factors from `seed`, spanning darkening, brightening, desaturation and oversaturation.
inline void add_jitter(Batch& b, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 2.0f);
  for (size_t i = 0; i < b.specs.size(); ++i) {
    media::JitterFactors& f = b.specs[i].jitter;
    if (i % 4 == 1) f.brightness = u(rng);
    if (i % 4 == 2) f = media::JitterFactors{u(rng), u(rng), u(rng)};
    if (i % 4 == 3) f.contrast = u(rng), f.saturation = u(rng);
  }
}

}  // namespace bt::cuda::test
