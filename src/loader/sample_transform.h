// The per-sample image work a loader worker runs: encoded bytes -> uint8 HWC crop, and crop -> normalised
// float CHW. The default is bt::media (transform_to_u8 / normalize_hwc_to_chw); tests substitute cheap
// fakes. One instance per worker thread (it owns that thread's scratch buffers), so it needs no locking.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "common/aligned_buffer.h"
#include "loader/decoded_batch.h"
#include "media/transform.h"

namespace bt::loader {

class SampleTransform {
 public:
  virtual ~SampleTransform() = default;
  // Writes spec.image_size^2 * 3 bytes to out_hwc; throws bt::Error (reason only) on bad input.
  virtual void to_u8(std::span<const uint8_t> encoded, const media::TransformSpec& spec, uint64_t sample_seed,
                     uint8_t* out_hwc, media::TransformTiming* timing) = 0;
  // spec.image_size^2 HWC pixels -> float CHW, normalised with spec.mean / spec.std.
  virtual void normalize(const uint8_t* hwc, const media::TransformSpec& spec, float* chw) = 0;
  // Decode-only mode (LoaderOptions::output_decoded): fills `meta` (all but offset) and writes the pixels to
  // pack into `out` (loader/decode_only.h). The default throws bt::Error: not every transform supports it.
  // ship_device_jpegs: encoded mode (LoaderOptions::ship_device_jpegs).
  virtual void decode_only(std::span<const uint8_t> encoded, const media::TransformSpec& spec, uint64_t sample_seed,
                           bool ship_device_jpegs, DecodedSample& meta, AlignedBuffer<uint8_t>& out,
                           media::TransformTiming* timing);
};

using TransformFactory = std::function<std::unique_ptr<SampleTransform>()>;

// bt::media's transform; throws bt::Error if bridgetune was built without the media library.
std::unique_ptr<SampleTransform> make_media_transform();

}  // namespace bt::loader
