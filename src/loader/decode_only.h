// The per-sample work of the loader's decode-only mode with bt::media: probe, plan (media/plan.h, the same
// plan media::transform_to_u8 follows), decode at the plan's DCT scale, and copy out the pixels the device
// resamples (the crop rect for full-scale train samples, else the whole decoded image).
#pragma once
#include <cstdint>
#include <span>

#include "common/aligned_buffer.h"
#include "loader/decoded_batch.h"
#include "media/image.h"
#include "media/transform.h"

namespace bt::loader {

// Throws bt::Error (reason only) on bad input, as transform_to_u8. `scratch` is the worker's decode buffer.
void decode_for_device(std::span<const uint8_t> encoded, const media::TransformSpec& spec, uint64_t sample_seed,
                       media::ImageU8& scratch, DecodedSample& meta, AlignedBuffer<uint8_t>& out,
                       media::TransformTiming* timing);

}  // namespace bt::loader
