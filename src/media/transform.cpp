#include "media/transform.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/error.h"
#include "common/machine_memory.h"
#include "media/color_jitter.h"
#include "media/decode.h"
#include "media/plan.h"
#include "media/resize.h"
#include "media/simd.h"

namespace bt::media {

struct MediaScratch::Impl {
  ImageU8 decoded;
  AlignedBuffer<uint8_t> png_rows;  // a block of rows of a PNG decoded row by row
  ResizeScratch resize;
  // One huge image must not pin its buffers in every worker for the rest of the run: above this they go back.
  static constexpr size_t kKeepBytes = size_t(32) << 20;
  void release_large() {
    decoded.pixels.release_above(kKeepBytes);
    png_rows.release_above(kKeepBytes);
    resize.tmp.release_above(kKeepBytes);
    resize.cols.release_above(kKeepBytes);
    resize.hout.release_above(kKeepBytes);
  }
};
MediaScratch::MediaScratch() : impl(std::make_unique<Impl>()) {}
MediaScratch::~MediaScratch() = default;

std::unique_ptr<MediaScratch> make_scratch() { return std::make_unique<MediaScratch>(); }

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// What the transform holds for one image besides its output, checked against the decode budget (media/decode.h)
// before any of it is allocated: the decoder's buffers (a block of rows for a streamed PNG) and the resize's
// intermediate, the source rows the output window reads (its box span plus the bicubic support, 2 px a side,
// widened by the downscale factor).
uint64_t transform_bytes(const ImageInfo& info, const TransformPlan& p) {
  const double scale = (p.y.box1 - p.y.box0) / p.y.out_full;
  const double rows = std::min<double>(p.y.src_extent, p.image_size * scale + 4 * std::max(scale, 1.0) + 2);
  const uint64_t decode = png_streams(info) ? uint64_t(p.dec_w) * (kResizeRowBlock * 3 + info.temp_bytes_per_pixel)
                                            : decode_bytes(info, p.scale_num);
  return decode + resize_scratch_bytes(p.x.src_extent, static_cast<int>(rows), p.image_size);
}

}  // namespace

void transform_to_u8(std::span<const uint8_t> encoded, const TransformSpec& spec, uint64_t sample_seed,
                     uint8_t* out_hwc, MediaScratch& scratch, TransformTiming* timing) {
  const auto t0 = Clock::now();
  const ImageInfo info = probe_image(encoded, spec.max_image_pixels);
  const TransformPlan p = plan_transform(info, spec, sample_seed);
  check_decode_budget(info, transform_bytes(info, p), spec.max_image_pixels);
  MediaScratch::Impl& s = *scratch.impl;
  struct Release {  // also when the decode throws half way
    MediaScratch::Impl& s;
    ~Release() { s.release_large(); }
  } release{s};
  const int S = p.image_size;
  const Box box{p.x.box0, p.y.box0, p.x.box1, p.y.box1};
  const Window win{p.x.out_begin, p.y.out_begin, S, S};
  double decode_s = 0;
  auto t1 = Clock::now();
  if (png_streams(info)) {
    // Decoded and resampled together, a block of rows at a time: the PNG is never held whole. Its time counts
    // as decode (the two interleave).
    PngRowDecoder png(encoded, spec.max_image_pixels, s.png_rows);
    check_decoded_size(p, png.width(), png.height());
    const size_t x0 = static_cast<size_t>(p.x.src_begin) * 3;
    resize_rgb8_rows([&](int y, int n, size_t* stride) { return png.rows(p.y.src_begin + y, n, stride) + x0; },
                     p.x.src_extent, p.y.src_extent, box, p.x.out_full, p.y.out_full, win, out_hwc,
                     static_cast<size_t>(S) * 3, s.resize, p.flip);
    decode_s = seconds_since(t0);
    t1 = Clock::now();
  } else {
    ImageU8& img = s.decoded;
    decode_rgb8(encoded, info, spec.max_image_pixels, img, p.scale_num);
    check_decoded_size(p, img.width, img.height);
    decode_s = seconds_since(t0);
    t1 = Clock::now();
    const uint8_t* origin = img.row(p.y.src_begin) + static_cast<size_t>(p.x.src_begin) * 3;
    resize_rgb8(origin, p.x.src_extent, p.y.src_extent, img.stride(), box, p.x.out_full, p.y.out_full, win,
                out_hwc, static_cast<size_t>(S) * 3, s.resize, p.flip);
  }
  if (jitter_any(p.jitter)) apply_color_jitter(out_hwc, static_cast<size_t>(S) * S, p.jitter);
  if (timing) {
    timing->decode_s = decode_s;
    timing->transform_s = seconds_since(t1);
    timing->decoded_with_warnings = !png_streams(info) && s.decoded.decoded_with_warnings;
  }
}

void check_preprocess_size(int image_size, bool float_output, const std::string& what, const std::string& flag) {
  const uint64_t per_pixel = float_output ? 15 : 3, side = uint64_t(std::max(image_size, 0));
  if (side * side * per_pixel <= kMaxPreprocessBytes) return;
  const int largest = static_cast<int>(std::sqrt(double(kMaxPreprocessBytes / per_pixel)));
  fail(what, " is ", image_size, ": ", bytes_str(side * side * per_pixel), " of ", float_output ? "float" : "uint8",
       " output, more than preprocess's ", bytes_str(kMaxPreprocessBytes), "; use ", flag, largest, " or less");
}

void normalize_hwc_to_chw(const uint8_t* hwc, int width, int height, float* chw, const float mean[3],
                          const float std[3]) {
  normalize_u8_hwc_to_chw(hwc, static_cast<size_t>(width) * height, chw, mean, std);
}

}  // namespace bt::media
