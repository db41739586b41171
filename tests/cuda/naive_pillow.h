// Test-only, deliberately plain transcription of what the CPU path does with Pillow + torchvision
// (resize the WHOLE image/crop in two full passes with a uint8 image between, then crop, flip and
// normalise with the textbook formula). The kernel reference (cuda/resize_ref) must equal it exactly.
#pragma once
#include <cstdint>
#include <vector>

#include "media/resample_coeffs.h"
#include "media/transform.h"

namespace bt::cuda::test {

struct Image {
  int w = 0, h = 0;
  std::vector<uint8_t> px;  // RGB HWC
  uint8_t at(int x, int y, int c) const { return px[(static_cast<size_t>(y) * w + x) * 3 + c]; }
};

// Pillow Image.resize((ow, oh), BICUBIC, box=(x0, y0, x1, y1)).
inline Image pillow_resize(const Image& in, int ow, int oh, double x0, double y0, double x1, double y1) {
  using namespace bt::media;
  const ResampleCoeffs cx = compute_resample_coeffs(in.w, x0, x1, ow);
  const ResampleCoeffs cy = compute_resample_coeffs(in.h, y0, y1, oh);
  Image mid{ow, in.h, std::vector<uint8_t>(static_cast<size_t>(ow) * in.h * 3)};
  for (int y = 0; y < in.h; ++y)
    for (int x = 0; x < ow; ++x)
      for (int c = 0; c < 3; ++c) {
        int32_t acc = kFixedHalf;
        for (int k = 0; k < cx.bounds[x].count; ++k)
          acc += in.at(cx.bounds[x].first + k, y, c) * cx.fixed[static_cast<size_t>(x) * cx.taps + k];
        mid.px[(static_cast<size_t>(y) * ow + x) * 3 + c] = clip8_fixed(acc);
      }
  Image out{ow, oh, std::vector<uint8_t>(static_cast<size_t>(ow) * oh * 3)};
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x)
      for (int c = 0; c < 3; ++c) {
        int32_t acc = kFixedHalf;
        for (int k = 0; k < cy.bounds[y].count; ++k)
          acc += mid.at(x, cy.bounds[y].first + k, c) * cy.fixed[static_cast<size_t>(y) * cy.taps + k];
        out.px[(static_cast<size_t>(y) * ow + x) * 3 + c] = clip8_fixed(acc);
      }
  return out;
}

inline Image crop(const Image& in, int left, int top, int w, int h) {
  Image out{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) out.px[(static_cast<size_t>(y) * w + x) * 3 + c] = in.at(left + x, top + y, c);
  return out;
}

inline Image hflip(const Image& in) {
  Image out = in;
  for (int y = 0; y < in.h; ++y)
    for (int x = 0; x < in.w; ++x)
      for (int c = 0; c < 3; ++c) out.px[(static_cast<size_t>(y) * in.w + x) * 3 + c] = in.at(in.w - 1 - x, y, c);
  return out;
}

// CHW floats, (v / 255 - mean) / std.
inline std::vector<float> normalize(const Image& in) {
  std::vector<float> out(static_cast<size_t>(in.w) * in.h * 3);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < in.h; ++y)
      for (int x = 0; x < in.w; ++x)
        out[(static_cast<size_t>(c) * in.h + y) * in.w + x] =
            (in.at(x, y, c) / 255.0f - bt::media::kClipMean[c]) / bt::media::kClipStd[c];
  return out;
}

}  // namespace bt::cuda::test
