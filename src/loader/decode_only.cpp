#include "loader/decode_only.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/error.h"
#include "media/decode.h"
#include "media/jpeg_frame.h"
#include "media/plan.h"

namespace bt::loader {
namespace {

using Clock = std::chrono::steady_clock;

void copy_rect(const media::ImageU8& img, int left, int top, int w, int h, AlignedBuffer<uint8_t>& out) {
  const size_t row = static_cast<size_t>(w) * 3;
  out.resize(row * static_cast<size_t>(h));
  for (int y = 0; y < h; ++y) std::memcpy(out.data() + row * y, img.row(top + y) + static_cast<size_t>(left) * 3, row);
}

bool subsampling_supported(const media::JpegFrame& f) {
  const media::JpegComponent& y = f.components[0];
  for (int c = 1; c < 3; ++c)
    if (f.components[c].h != 1 || f.components[c].v != 1) return false;
  return (y.h == 1 || y.h == 2) && (y.v == 1 || y.v == 2);  // 4:4:4, 4:2:2, 4:4:0, 4:2:0
}

bool names_rgb(const media::JpegFrame& f) {  // libjpeg reads component ids 'R','G','B' as RGB, not YCbCr
  return f.components[0].id == 'R' && f.components[1].id == 'G' && f.components[2].id == 'B';
}

// The JPEG's bytes as they are, with a full-scale plan: the device decodes and resamples the whole image.
void ship_encoded(std::span<const uint8_t> encoded, const media::TransformSpec& spec, uint64_t sample_seed,
                  DecodedSample& m, AlignedBuffer<uint8_t>& out) {
  media::TransformSpec full = spec;
  full.dct_scaling = false;
  m.plan = media::plan_transform(media::probe_image(encoded, spec.max_image_pixels), full, sample_seed);
  m.encoded = true;
  m.encoded_bytes = encoded.size();
  m.width = m.plan.dec_w;
  m.height = m.plan.dec_h;
  out.resize(encoded.size());
  std::memcpy(out.data(), encoded.data(), encoded.size());
}

}  // namespace

bool device_decodable_jpeg(std::span<const uint8_t> encoded) {
  if (media::sniff_format(encoded) != media::ImageFormat::kJpeg) return false;
  media::JpegFrame f;
  try {
    f = media::read_jpeg_frame(encoded);
  } catch (const Error&) {
    return false;
  }
  return (f.sof == 0 || f.sof == 1) && f.precision == 8 && f.num_components == 3 && f.width > 0 &&
         f.height > 0 && f.ends_with_eoi && f.adobe_transform != 0 && f.adobe_transform != 2 && !names_rgb(f) &&
         subsampling_supported(f) && !f.extraneous;
}

void decode_for_device(std::span<const uint8_t> encoded, const media::TransformSpec& spec, uint64_t sample_seed,
                       bool ship_device_jpegs, media::ImageU8& img, DecodedSample& m, AlignedBuffer<uint8_t>& out,
                       media::TransformTiming* timing) {
  const auto t0 = Clock::now();
  m = DecodedSample{};
  if (ship_device_jpegs && device_decodable_jpeg(encoded)) {
    ship_encoded(encoded, spec, sample_seed, m, out);
    if (timing) timing->decode_s = std::chrono::duration<double>(Clock::now() - t0).count();
    return;
  }
  const media::ImageInfo info = media::probe_image(encoded, spec.max_image_pixels);
  m.plan = media::plan_transform(info, spec, sample_seed);
  media::decode_rgb8(encoded, info, spec.max_image_pixels, img, m.plan.scale_num);  // within the decode budget
  media::check_decoded_size(m.plan, img.width, img.height);
  const auto t1 = Clock::now();
  // Full-scale train samples resample only their crop rect: pack just that (fewer bytes to upload).
  m.cropped = m.plan.train && m.plan.scale_num == 8;
  const media::CropRect whole{0, 0, img.height, img.width};
  const media::CropRect& r = m.cropped ? m.plan.crop : whole;
  m.width = r.width;
  m.height = r.height;
  copy_rect(img, r.left, r.top, r.width, r.height, out);
  if (timing) {
    timing->decode_s = std::chrono::duration<double>(t1 - t0).count();
    timing->transform_s = std::chrono::duration<double>(Clock::now() - t1).count();
    timing->decoded_with_warnings = img.decoded_with_warnings;
  }
}

}  // namespace bt::loader
