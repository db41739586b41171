#include "media/transform.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/error.h"
#include "media/decode.h"
#include "media/random_crop.h"
#include "media/resize.h"
#include "media/simd.h"

namespace bt::media {

struct MediaScratch::Impl {
  ImageU8 decoded;
  ResizeScratch resize;
};
MediaScratch::MediaScratch() : impl(std::make_unique<Impl>()) {}
MediaScratch::~MediaScratch() = default;

std::unique_ptr<MediaScratch> make_scratch() { return std::make_unique<MediaScratch>(); }

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// torchvision Resize(size) on a PIL image: short side -> size, long side int(size * long / short).
void eval_output_size(int w, int h, int size, int& new_w, int& new_h) {
  const double long_side = static_cast<double>(size) * std::max(w, h) / std::min(w, h);
  // Only the center crop is ever computed, but the geometry must fit in an int.
  if (long_side > 1e9) fail("image ", w, "x", h, " is too elongated to resize to ", size, " px");
  if (w <= h) {
    new_w = size;
    new_h = static_cast<int>(long_side);
  } else {
    new_h = size;
    new_w = static_cast<int>(long_side);
  }
}

// Largest DCT reduction keeping the region (rw x rh of a w x h image) at >= size pixels on both sides.
int dct_scale_for_region(int w, int h, double rw, double rh, int size) {
  int best = 8;
  for (int k = 7; k >= 1; --k) {
    const double sx = static_cast<double>(jpeg_scaled(w, k)) / w, sy = static_cast<double>(jpeg_scaled(h, k)) / h;
    if (rw * sx >= size && rh * sy >= size)
      best = k;
    else
      break;
  }
  return best;
}

}  // namespace

void transform_to_u8(std::span<const uint8_t> encoded, const TransformSpec& spec, uint64_t sample_seed,
                     uint8_t* out_hwc, MediaScratch& scratch, TransformTiming* timing) {
  const int S = spec.image_size;
  if (S <= 0 || S > 16384) fail("image_size ", S, " out of range (1..16384)");
  const auto t0 = Clock::now();
  const ImageInfo info = probe_image(encoded, spec.max_image_pixels);
  const int W = info.width, H = info.height;
  const bool jpeg = info.format == ImageFormat::kJpeg;
  const size_t out_stride = static_cast<size_t>(S) * 3;
  ImageU8& img = scratch.impl->decoded;

  if (spec.mode == TransformMode::kEval) {
    int new_w, new_h;
    eval_output_size(W, H, S, new_w, new_h);
    const int scale = (jpeg && spec.dct_scaling) ? dct_scale_for_region(W, H, W, H, S) : 8;
    decode_rgb8(encoded, spec.max_image_pixels, img, scale);
    const double decode_s = seconds_since(t0);
    const auto t1 = Clock::now();
    // torchvision CenterCrop: top = int(round((h - size) / 2.0)), Python's half-to-even round.
    const int top = static_cast<int>(std::nearbyint((new_h - S) / 2.0));
    const int left = static_cast<int>(std::nearbyint((new_w - S) / 2.0));
    // A DCT-scaled image covers W * scale/8 pixels' worth of the original (its last pixel is partial).
    const Box box{0, 0, std::min<double>(W * scale / 8.0, img.width), std::min<double>(H * scale / 8.0, img.height)};
    resize_rgb8(img.pixels.data(), img.width, img.height, img.stride(), box, new_w, new_h, Window{left, top, S, S}, out_hwc,
                out_stride, scratch.impl->resize);
    if (timing) {
      timing->decode_s = decode_s;
      timing->transform_s = seconds_since(t1);
    }
    return;
  }

  SampleRng rng(sample_seed);
  const CropRect c = random_resized_crop_params(W, H, spec.scale_min, spec.scale_max, spec.ratio_min,
                                                spec.ratio_max, rng);
  const bool flip = rng.uniform() < spec.hflip_p;
  const int scale = (jpeg && spec.dct_scaling) ? dct_scale_for_region(W, H, c.width, c.height, S) : 8;
  decode_rgb8(encoded, spec.max_image_pixels, img, scale);
  const double decode_s = seconds_since(t0);
  const auto t1 = Clock::now();
  if (scale == 8) {
    // torchvision's resized_crop on PIL is crop() then resize(): the crop is a sub-image whose edges clamp
    // the filter, so resample the cropped view, not a box of the full image.
    const uint8_t* origin = img.row(c.top) + static_cast<size_t>(c.left) * 3;
    resize_rgb8(origin, c.width, c.height, img.stride(), Box{0, 0, double(c.width), double(c.height)}, S, S,
                Window{0, 0, S, S}, out_hwc, out_stride, scratch.impl->resize, flip);
  } else {
    const double sx = scale / 8.0, sy = scale / 8.0;
    const Box box{c.left * sx, c.top * sy, std::min<double>((c.left + c.width) * sx, img.width),
                  std::min<double>((c.top + c.height) * sy, img.height)};
    resize_rgb8(img.pixels.data(), img.width, img.height, img.stride(), box, S, S, Window{0, 0, S, S}, out_hwc,
                out_stride, scratch.impl->resize, flip);
  }
  if (timing) {
    timing->decode_s = decode_s;
    timing->transform_s = seconds_since(t1);
  }
}

void normalize_hwc_to_chw(const uint8_t* hwc, int width, int height, float* chw, const float mean[3],
                          const float std[3]) {
  normalize_u8_hwc_to_chw(hwc, static_cast<size_t>(width) * height, chw, mean, std);
}

}  // namespace bt::media
