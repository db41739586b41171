#include "cuda/resize_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"
#include "cuda/pixel_math.h"
#include "media/plan.h"
#include "media/resample_coeffs.h"
#include "media/transform.h"

namespace bt::cuda {
static_assert(kFixedBits == media::kPrecisionBits, "kernel rounding must match Pillow's fixed point");

namespace {

constexpr int kMaxImageSize = 8192;

// Python's round(): half to even (torchvision's center crop uses it).
int py_round(double v) { return static_cast<int>(std::nearbyint(v)); }

AxisSpec whole_axis(int in, int out_full, int out_begin) {
  return AxisSpec{0, in, 0.0, static_cast<double>(in), out_full, out_begin};
}

void check_axis(const AxisSpec& a, int dim, int image_size, size_t sample, const char* name) {
  const bool ok = a.src_begin >= 0 && a.src_extent >= 1 && a.src_begin <= dim - a.src_extent &&
                  a.box0 >= 0 && a.box1 > a.box0 && a.box1 <= a.src_extent && a.out_full >= 1 &&
                  a.out_full <= (1 << 20) && a.out_begin >= 0 && a.out_begin <= a.out_full - image_size;
  if (!ok)
    fail("cuda resize plan: sample ", sample, " axis ", name, " is invalid (image ", dim, " px, region [",
         a.src_begin, ", +", a.src_extent, "), box [", a.box0, ", ", a.box1, "), out ", a.out_full,
         " from ", a.out_begin, ", image_size ", image_size, ")");
}

// Appends one axis' tables for the kept outputs; returns the blob offset and sets taps.
uint32_t append_axis(std::vector<int32_t>& blob, const AxisSpec& a, int image_size, int base, int* taps) {
  // Only the kept outputs' tables (entry o is output out_begin + o).
  const media::ResampleCoeffs c = media::compute_resample_coeffs_range(a.src_extent, a.box0, a.box1, a.out_full,
                                                                       a.out_begin, image_size, media::Filter::kBicubic);
  const size_t at = blob.size();
  if (at + static_cast<size_t>(image_size) * (2 + c.taps) > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    fail("cuda resize plan: coefficient tables exceed 2^31 entries; use a smaller batch");
  *taps = c.taps;
  blob.resize(at + static_cast<size_t>(image_size) * (2 + c.taps));
  int32_t* bounds = blob.data() + at;
  int32_t* weights = bounds + 2 * image_size;
  for (int o = 0; o < image_size; ++o) {
    const media::ResampleBounds& b = c.bounds[o];
    bounds[2 * o] = a.src_begin + b.first - base;
    bounds[2 * o + 1] = b.count;
    std::copy_n(&c.fixed[static_cast<size_t>(o) * c.taps], c.taps, weights + static_cast<size_t>(o) * c.taps);
  }
  return static_cast<uint32_t>(at);
}

}  // namespace

SampleSpec eval_spec(int width, int height, int image_size) {
  if (width <= 0 || height <= 0 || image_size <= 0) fail("cuda eval_spec: bad size ", width, "x", height);
  // torchvision Resize(int): the short side becomes image_size, the long one int(size * long / short).
  const bool w_short = width <= height;
  const int s = w_short ? width : height, l = w_short ? height : width;
  const int new_l = static_cast<int>(static_cast<double>(static_cast<int64_t>(image_size) * l) / s);
  const int new_w = w_short ? image_size : new_l, new_h = w_short ? new_l : image_size;
  SampleSpec sp;
  sp.width = width;
  sp.height = height;
  sp.x = whole_axis(width, new_w, py_round((new_w - image_size) / 2.0));
  sp.y = whole_axis(height, new_h, py_round((new_h - image_size) / 2.0));
  return sp;
}

SampleSpec spec_of(const media::TransformPlan& p, bool cropped) {
  auto axis = [](const media::PlanAxis& a) {
    return AxisSpec{a.src_begin, a.src_extent, a.box0, a.box1, a.out_full, a.out_begin};
  };
  SampleSpec sp;
  sp.width = p.dec_w;
  sp.height = p.dec_h;
  sp.x = axis(p.x);
  sp.y = axis(p.y);
  sp.flip = p.flip;
  sp.jitter = p.jitter;
  if (cropped) {  // only the crop rect was packed: resampling all of it is the same crop() + resize()
    if (p.x.src_begin != p.crop.left || p.x.src_extent != p.crop.width || p.y.src_begin != p.crop.top ||
        p.y.src_extent != p.crop.height)
      fail("cuda spec_of: a cropped sample's plan does not resample its crop rect");
    sp.width = p.crop.width, sp.height = p.crop.height;
    sp.x.src_begin = sp.y.src_begin = 0;
  }
  return sp;
}

SampleSpec crop_spec(int width, int height, int top, int left, int crop_h, int crop_w, int image_size, bool flip) {
  SampleSpec sp;
  sp.width = width;
  sp.height = height;
  sp.x = AxisSpec{left, crop_w, 0.0, static_cast<double>(crop_w), image_size, 0};
  sp.y = AxisSpec{top, crop_h, 0.0, static_cast<double>(crop_h), image_size, 0};
  sp.flip = flip;
  return sp;
}

SampleSpec box_spec(int width, int height, double x0, double y0, double x1, double y1, int image_size, bool flip) {
  SampleSpec sp;
  sp.width = width;
  sp.height = height;
  sp.x = AxisSpec{0, width, x0, x1, image_size, 0};
  sp.y = AxisSpec{0, height, y0, y1, image_size, 0};
  sp.flip = flip;
  return sp;
}

float normalize_level(int v, float mean, float std) { return (static_cast<float>(v) / 255.0f - mean) / std; }

size_t BatchPlan::output_bytes() const {
  return samples.size() * 3 * static_cast<size_t>(image_size) * image_size * (type == OutputType::kFloat32 ? 4 : 2);
}

BatchPlan make_plan(const std::vector<SampleSpec>& specs, const std::vector<uint64_t>& offsets,
                    size_t input_bytes, int image_size, OutputType type, const float* mean, const float* std) {
  if (image_size < 1 || image_size > kMaxImageSize)
    fail("cuda resize plan: image_size ", image_size, " is outside [1, ", kMaxImageSize, "]");
  if (offsets.size() != specs.size())
    fail("cuda resize plan: ", specs.size(), " samples but ", offsets.size(), " offsets");
  if (!mean) mean = media::kClipMean;
  if (!std) std = media::kClipStd;
  BatchPlan p;
  p.image_size = image_size;
  p.type = type;
  p.input_bytes = input_bytes;
  for (int c = 0; c < 3; ++c) {
    if (!(std[c] > 0.0f)) fail("cuda resize plan: std[", c, "] must be > 0");
    for (int v = 0; v < 256; ++v) p.lut[c][v] = normalize_level(v, mean[c], std[c]);
  }
  p.samples.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const SampleSpec& s = specs[i];
    if (s.width < 1 || s.height < 1 || s.width > (1 << 20) || s.height > (1 << 20))
      fail("cuda resize plan: sample ", i, " has bad size ", s.width, "x", s.height);
    const uint64_t bytes = static_cast<uint64_t>(s.width) * s.height * 3;
    if (offsets[i] > input_bytes || bytes > input_bytes - offsets[i])
      fail("cuda resize plan: sample ", i, " (", s.width, "x", s.height, " at offset ", offsets[i],
           ") runs past the ", input_bytes, "-byte input buffer");
    check_axis(s.x, s.width, image_size, i, "x");
    check_axis(s.y, s.height, image_size, i, "y");
    const media::JitterFactors& j = s.jitter;
    if (!(j.brightness >= 0 && j.brightness <= 1e3 && j.contrast >= 0 && j.contrast <= 1e3 && j.saturation >= 0 &&
          j.saturation <= 1e3))
      fail("cuda resize plan: sample ", i, " has colour jitter factors out of [0, 1000]");

    SamplePlan sp{};
    sp.in_offset = offsets[i];
    sp.width = s.width;
    sp.height = s.height;
    sp.flip = s.flip ? 1 : 0;
    sp.jitter = s.jitter;
    p.jitter = p.jitter || media::jitter_any(s.jitter);
    sp.x_coef = append_axis(p.coef, s.x, image_size, 0, &sp.x_taps);
    // Rows the vertical pass reads: compute the y tables once with base 0, then rebase on row0.
    sp.y_coef = append_axis(p.coef, s.y, image_size, 0, &sp.y_taps);
    int32_t* yb = p.coef.data() + sp.y_coef;
    int lo = std::numeric_limits<int>::max(), hi = 0;
    for (int o = 0; o < image_size; ++o) {
      lo = std::min(lo, yb[2 * o]);
      hi = std::max(hi, yb[2 * o] + yb[2 * o + 1]);
    }
    for (int o = 0; o < image_size; ++o) yb[2 * o] -= lo;
    sp.row0 = lo;
    sp.rows = hi - lo;
    if (static_cast<int64_t>(sp.rows) * image_size > std::numeric_limits<int32_t>::max())
      fail("cuda resize plan: sample ", i, " needs ", sp.rows, " source rows x ", image_size,
           " outputs, more than one kernel grid row can index");
    sp.scratch_offset = p.scratch_bytes;
    p.scratch_bytes += static_cast<size_t>(sp.rows) * image_size * 3;
    p.max_rows = std::max(p.max_rows, sp.rows);
    p.samples.push_back(sp);
  }
  return p;
}

}  // namespace bt::cuda
