#include "media/plan.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "media/color_jitter.h"

namespace bt::media {
namespace {

// Python's round() (half to even) of a float, as torchvision's CenterCrop uses.
int py_round(double v) { return static_cast<int>(std::nearbyint(v)); }

// Resize the whole decoded image (box scaled from the original) onto out_full px, keeping [out_begin, +S).
PlanAxis whole_axis(int orig, int dec, int scale_num, int out_full, int out_begin) {
  return PlanAxis{0, dec, 0.0, std::min<double>(orig * scale_num / 8.0, dec), out_full, out_begin};
}

void plan_eval(TransformPlan& p, bool dct) {
  const int W = p.orig_w, H = p.orig_h, S = p.image_size;
  // torchvision Resize(size) on a PIL image: short side -> size, long side int(size * long / short).
  const double long_side = static_cast<double>(S) * std::max(W, H) / std::min(W, H);
  // Only the center crop is ever computed, but the geometry must fit in an int.
  if (long_side > 1e9) fail("image ", W, "x", H, " is too elongated to resize to ", S, " px");
  const int new_w = W <= H ? S : static_cast<int>(long_side), new_h = W <= H ? static_cast<int>(long_side) : S;
  p.crop = CropRect{0, 0, H, W};
  p.scale_num = dct ? choose_jpeg_scale(W, H, W, H, S) : 8;
  p.dec_w = jpeg_scaled(W, p.scale_num), p.dec_h = jpeg_scaled(H, p.scale_num);
  p.x = whole_axis(W, p.dec_w, p.scale_num, new_w, py_round((new_w - S) / 2.0));
  p.y = whole_axis(H, p.dec_h, p.scale_num, new_h, py_round((new_h - S) / 2.0));
}

void plan_train(TransformPlan& p, const TransformSpec& spec, uint64_t sample_seed, bool dct) {
  const int W = p.orig_w, H = p.orig_h, S = p.image_size;
  SampleRng rng(sample_seed);
  const CropRect c = random_resized_crop_params(W, H, spec.scale_min, spec.scale_max, spec.ratio_min,
                                                spec.ratio_max, rng);
  p.crop = c;
  p.flip = rng.uniform() < spec.hflip_p;
  p.jitter = draw_color_jitter(spec.color_jitter, rng);
  p.scale_num = dct ? choose_jpeg_scale(W, H, c.width, c.height, S) : 8;
  p.dec_w = jpeg_scaled(W, p.scale_num), p.dec_h = jpeg_scaled(H, p.scale_num);
  if (p.scale_num == 8) {
    // torchvision's resized_crop on PIL is crop() then resize(): the crop is a sub-image whose edges clamp
    // the filter, so resample the cropped view, not a box of the full image.
    p.x = PlanAxis{c.left, c.width, 0.0, static_cast<double>(c.width), S, 0};
    p.y = PlanAxis{c.top, c.height, 0.0, static_cast<double>(c.height), S, 0};
    return;
  }
  const double s = p.scale_num / 8.0;
  p.x = PlanAxis{0, p.dec_w, c.left * s, std::min<double>((c.left + c.width) * s, p.dec_w), S, 0};
  p.y = PlanAxis{0, p.dec_h, c.top * s, std::min<double>((c.top + c.height) * s, p.dec_h), S, 0};
}

}  // namespace

TransformPlan plan_transform(const ImageInfo& info, const TransformSpec& spec, uint64_t sample_seed) {
  const int S = spec.image_size;
  if (S <= 0 || S > 16384) fail("image_size ", S, " out of range (1..16384)");
  TransformPlan p;
  p.format = info.format;
  p.orig_w = info.width;
  p.orig_h = info.height;
  p.image_size = S;
  p.train = spec.mode == TransformMode::kTrain;
  const bool dct = info.format == ImageFormat::kJpeg && spec.dct_scaling;  // PNGs decode at full size only
  if (p.train)
    plan_train(p, spec, sample_seed, dct);
  else
    plan_eval(p, dct);
  return p;
}

void check_decoded_size(const TransformPlan& p, int width, int height) {
  if (width != p.dec_w || height != p.dec_h)
    fail("decoded ", width, "x", height, " at scale ", p.scale_num, "/8 but planned ", p.dec_w, "x", p.dec_h);
}

}  // namespace bt::media
