#include "loader/decode_only.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/error.h"
#include "media/decode.h"
#include "media/plan.h"

namespace bt::loader {
namespace {

using Clock = std::chrono::steady_clock;

void copy_rect(const media::ImageU8& img, int left, int top, int w, int h, AlignedBuffer<uint8_t>& out) {
  const size_t row = static_cast<size_t>(w) * 3;
  out.resize(row * static_cast<size_t>(h));
  for (int y = 0; y < h; ++y) std::memcpy(out.data() + row * y, img.row(top + y) + static_cast<size_t>(left) * 3, row);
}

}  // namespace

void decode_for_device(std::span<const uint8_t> encoded, const media::TransformSpec& spec, uint64_t sample_seed,
                       media::ImageU8& img, DecodedSample& m, AlignedBuffer<uint8_t>& out,
                       media::TransformTiming* timing) {
  const auto t0 = Clock::now();
  m = DecodedSample{};
  m.plan = media::plan_transform(media::probe_image(encoded, spec.max_image_pixels), spec, sample_seed);
  media::decode_rgb8(encoded, spec.max_image_pixels, img, m.plan.scale_num);
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
  }
}

}  // namespace bt::loader
