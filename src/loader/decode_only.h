// The per-sample work of the loader's decode-only mode with bt::media: probe, plan (media/plan.h, the same
// plan media::transform_to_u8 follows), decode at the plan's DCT scale, and copy out the pixels the device
// resamples (the crop rect for full-scale train samples, else the whole decoded image).
// Encoded mode (ship_device_jpegs, for a GPU JPEG decoder): a JPEG that device_decodable_jpeg() accepts is not
// decoded here at all; its compressed bytes are copied out as they are (DecodedSample::encoded) with a plan at
// full scale (no DCT scaling: the device decoder has none), so the worker's cost is a header parse and a copy.
#pragma once
#include <cstdint>
#include <span>

#include "common/aligned_buffer.h"
#include "loader/decoded_batch.h"
#include "media/image.h"
#include "media/transform.h"

namespace bt::loader {

// The one rule for which images go to the device decoder, made to fit nvJPEG's hardware engine (A100/H100/H200):
// a baseline or extended-sequential Huffman JPEG, 8-bit, three YCbCr components at 4:4:4, 4:2:2, 4:2:0 or 4:4:0,
// that ends with EOI. Everything else -- PNG, progressive, arithmetic, 12-bit, grayscale, CMYK/YCCK, Adobe RGB,
// 4:1:1, a file cut short (whose error the CPU decoder reports, or skips under on_bad_sample=skip), extraneous
// bytes between its header's segments (libjpeg decodes through them with a warning; nvJPEG is not known to), and
// every other format (WebP, GIF, BMP, TIFF) -- is decoded on the CPU workers, and counted (LoaderStats::cpu_decoded).
// Never throws: malformed bytes are simply not device-decodable.
bool device_decodable_jpeg(std::span<const uint8_t> encoded);

// Throws bt::Error (reason only) on bad input, as transform_to_u8. `scratch` is the worker's decode buffer.
void decode_for_device(std::span<const uint8_t> encoded, const media::TransformSpec& spec, uint64_t sample_seed,
                       bool ship_device_jpegs, media::ImageU8& scratch, DecodedSample& meta,
                       AlignedBuffer<uint8_t>& out, media::TransformTiming* timing);

}  // namespace bt::loader
