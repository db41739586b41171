#include "loader/decode_only.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/error.h"
#include "media/decode.h"
#include "media/random_crop.h"

namespace bt::loader {
namespace {

using Clock = std::chrono::steady_clock;

// media/transform.cpp's choice, which must stay identical: the largest DCT reduction keeping the region
// (rw x rh of a w x h image) at >= size pixels on both sides.
int dct_scale_for_region(int w, int h, double rw, double rh, int size) {
  int best = 8;
  for (int k = 7; k >= 1; --k) {
    const double sx = static_cast<double>(media::jpeg_scaled(w, k)) / w;
    const double sy = static_cast<double>(media::jpeg_scaled(h, k)) / h;
    if (rw * sx >= size && rh * sy >= size)
      best = k;
    else
      break;
  }
  return best;
}

void copy_rect(const media::ImageU8& img, int left, int top, int w, int h, AlignedBuffer<uint8_t>& out) {
  const size_t row = static_cast<size_t>(w) * 3;
  out.resize(row * static_cast<size_t>(h));
  for (int y = 0; y < h; ++y) std::memcpy(out.data() + row * y, img.row(top + y) + static_cast<size_t>(left) * 3, row);
}

}  // namespace

void decode_for_device(std::span<const uint8_t> encoded, const media::TransformSpec& spec, uint64_t sample_seed,
                       media::ImageU8& img, DecodedSample& m, AlignedBuffer<uint8_t>& out,
                       media::TransformTiming* timing) {
  const int S = spec.image_size;
  if (S <= 0 || S > 16384) fail("image_size ", S, " out of range (1..16384)");
  const auto t0 = Clock::now();
  const media::ImageInfo info = media::probe_image(encoded, spec.max_image_pixels);
  const int W = info.width, H = info.height;
  const bool jpeg = info.format == media::ImageFormat::kJpeg && spec.dct_scaling;
  m = DecodedSample{};
  m.orig_w = W;
  m.orig_h = H;
  m.train = spec.mode == media::TransformMode::kTrain;
  if (!m.train) {
    const double long_side = static_cast<double>(S) * std::max(W, H) / std::min(W, H);
    if (long_side > 1e9) fail("image ", W, "x", H, " is too elongated to resize to ", S, " px");
    m.scale_num = jpeg ? dct_scale_for_region(W, H, W, H, S) : 8;
  } else {
    media::SampleRng rng(sample_seed);
    const media::CropRect c = media::random_resized_crop_params(W, H, spec.scale_min, spec.scale_max,
                                                                spec.ratio_min, spec.ratio_max, rng);
    m.flip = rng.uniform() < spec.hflip_p;
    m.top = c.top, m.left = c.left, m.crop_h = c.height, m.crop_w = c.width;
    m.scale_num = jpeg ? dct_scale_for_region(W, H, c.width, c.height, S) : 8;
  }
  media::decode_rgb8(encoded, spec.max_image_pixels, img, m.scale_num);
  m.dec_w = img.width;
  m.dec_h = img.height;
  const auto t1 = Clock::now();
  if (m.train && m.scale_num == 8) {
    if (m.left < 0 || m.top < 0 || m.left + m.crop_w > img.width || m.top + m.crop_h > img.height)
      fail("crop ", m.crop_w, "x", m.crop_h, "+", m.left, "+", m.top, " outside the decoded ", img.width, "x",
           img.height, " image");
    m.cropped = true;
    m.width = m.crop_w;
    m.height = m.crop_h;
    copy_rect(img, m.left, m.top, m.crop_w, m.crop_h, out);
  } else {
    m.width = img.width;
    m.height = img.height;
    copy_rect(img, 0, 0, img.width, img.height, out);
  }
  if (timing) {
    timing->decode_s = std::chrono::duration<double>(t1 - t0).count();
    timing->transform_s = std::chrono::duration<double>(Clock::now() - t1).count();
  }
}

}  // namespace bt::loader
