// The loader's "decode-only" output (LoaderOptions::output_decoded), for a device-side media pipeline:
// each sample is decoded (JPEG at the DCT scale the CPU transform would pick) but not resized. Batch::decoded
// holds all of a batch's RGB8 images packed into ONE 64-byte aligned host buffer (offsets table; its memory
// comes from LoaderOptions::packed_allocator, e.g. page-locked for an asynchronous device copy), plus the
// plan the CPU transform applies (media/plan.h: the eval center crop, or the train RandomResizedCrop rect and
// flip drawn from the same per-sample seed). Feeding these through cuda::specs_of + cuda::make_plan reproduces
// media::transform_to_u8 exactly. For train samples decoded at full scale only the crop rect's pixels are
// packed (`cropped`), which is what the GPU resamples anyway. In encoded mode (LoaderOptions::ship_device_jpegs) a
// sample may instead carry its compressed JPEG (`encoded`) for a device decoder. Depends on common/ and media's
// plain plan types.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/aligned_buffer.h"
#include "common/host_buffer.h"
#include "media/plan.h"

namespace bt::loader {

struct DecodedSample {
  uint64_t offset = 0;        // byte offset of the packed pixels in DecodedBatch::packed (64-aligned)
  int width = 0, height = 0;  // packed pixels: width * height * 3 bytes, rows tightly packed
  bool cropped = false;       // packed pixels are only plan.crop (train at scale 8), else the whole decoded image
  bool encoded = false;       // packed bytes are the JPEG file itself (encoded mode): the device decodes it to
                              // width x height (the plan's full-scale decoded size) before resampling
  uint64_t encoded_bytes = 0; // encoded: the JPEG's length in bytes
  media::TransformPlan plan;  // the sample's geometry: DCT scale, decoded size, crop rect, flip, resample regions
};

struct DecodedBatch {
  std::vector<DecodedSample> samples;     // [B], in batch order
  HostBuffer packed;                      // every sample's pixels, at samples[i].offset
  size_t bytes = 0;                       // bytes of `packed` in use
  std::vector<AlignedBuffer<uint8_t>> staging;  // per-sample worker output before packing (reused)
};

// Packs staging[0..n) into `packed` at 64-byte aligned offsets and fills each sample's offset and bytes.
void pack_decoded(DecodedBatch& d);

}  // namespace bt::loader
