#include "media/transform.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/error.h"
#include "media/decode.h"
#include "media/plan.h"
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

}  // namespace

void transform_to_u8(std::span<const uint8_t> encoded, const TransformSpec& spec, uint64_t sample_seed,
                     uint8_t* out_hwc, MediaScratch& scratch, TransformTiming* timing) {
  const auto t0 = Clock::now();
  const TransformPlan p = plan_transform(probe_image(encoded, spec.max_image_pixels), spec, sample_seed);
  ImageU8& img = scratch.impl->decoded;
  decode_rgb8(encoded, spec.max_image_pixels, img, p.scale_num);
  check_decoded_size(p, img.width, img.height);
  const double decode_s = seconds_since(t0);
  const auto t1 = Clock::now();
  const int S = p.image_size;
  const uint8_t* origin = img.row(p.y.src_begin) + static_cast<size_t>(p.x.src_begin) * 3;
  resize_rgb8(origin, p.x.src_extent, p.y.src_extent, img.stride(), Box{p.x.box0, p.y.box0, p.x.box1, p.y.box1},
              p.x.out_full, p.y.out_full, Window{p.x.out_begin, p.y.out_begin, S, S}, out_hwc,
              static_cast<size_t>(S) * 3, scratch.impl->resize, p.flip);
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
