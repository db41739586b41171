#include "media/resample_coeffs.h"

#include <cmath>

#include "common/error.h"

namespace bt::media {
namespace {

double bicubic(double x) {
  constexpr double a = -0.5;  // Pillow's (and Keys') choice; OpenCV uses -0.75
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

double bilinear(double x) {
  if (x < 0.0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

}  // namespace

ResampleCoeffs compute_resample_coeffs(int in_size, double in0, double in1, int out_size, Filter filter) {
  return compute_resample_coeffs_range(in_size, in0, in1, out_size, 0, out_size, filter);
}

ResampleCoeffs compute_resample_coeffs_range(int in_size, double in0, double in1, int out_size, int out_begin,
                                             int out_count, Filter filter) {
  if (in_size <= 0 || out_size <= 0 || !(in1 > in0) || in0 < 0 || in1 > in_size)
    fail("resample: bad sizes (in ", in_size, " box [", in0, ", ", in1, ") out ", out_size, ")");
  if (out_begin < 0 || out_count <= 0 || out_count > out_size - out_begin)
    fail("resample: output range [", out_begin, ", +", out_count, ") outside ", out_size);
  double (*fn)(double) = filter == Filter::kBicubic ? bicubic : bilinear;
  const double filter_support = filter == Filter::kBicubic ? 2.0 : 1.0;

  // Pillow computes the box in float; keep that rounding so the bounds agree at the edges.
  const double scale = static_cast<double>(static_cast<float>(in1) - static_cast<float>(in0)) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;
  const double support = filter_support * filterscale;
  const int taps = static_cast<int>(std::ceil(support)) * 2 + 1;

  ResampleCoeffs c;
  c.in_size = in_size;
  c.out_size = out_size;
  c.taps = taps;
  c.bounds.resize(out_count);
  c.weights.assign(static_cast<size_t>(out_count) * taps, 0.0);
  c.fixed.assign(static_cast<size_t>(out_count) * taps, 0);
  const double inv = 1.0 / filterscale;
  for (int o = 0; o < out_count; ++o) {
    const double center = static_cast<float>(in0) + (out_begin + o + 0.5) * scale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double* w = &c.weights[static_cast<size_t>(o) * taps];
    double sum = 0.0;
    for (int k = 0; k < xmax; ++k) {
      w[k] = fn((k + xmin - center + 0.5) * inv);
      sum += w[k];
    }
    if (sum != 0.0)
      for (int k = 0; k < xmax; ++k) w[k] /= sum;
    int32_t* f = &c.fixed[static_cast<size_t>(o) * taps];
    for (int k = 0; k < taps; ++k)
      f[k] = static_cast<int32_t>(w[k] < 0 ? -0.5 + w[k] * (1 << kPrecisionBits) : 0.5 + w[k] * (1 << kPrecisionBits));
    c.bounds[o] = {xmin, xmax};
  }
  return c;
}

}  // namespace bt::media
