// The loader's "decode-only" output (LoaderOptions::output_decoded), for a device-side media pipeline:
// each sample is decoded (JPEG at the DCT scale the CPU transform would pick) but not resized. Batch::decoded
// holds all of a batch's RGB8 images packed into ONE 64-byte aligned host buffer (offsets table), plus the
// geometry the CPU transform would have applied: the eval center crop, or the train RandomResizedCrop rect
// and flip drawn from the same per-sample seed. Feeding these through cuda::make_plan (cuda/decoded_spec.h)
// reproduces media::transform_to_u8 exactly. For train samples decoded at full scale only the crop rect's
// pixels are packed (`cropped`), which is what the GPU resamples anyway. No dependencies beyond common/.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/aligned_buffer.h"

namespace bt::loader {

struct DecodedSample {
  uint64_t offset = 0;         // byte offset of the packed pixels in DecodedBatch::packed (64-aligned)
  int width = 0, height = 0;   // packed pixels: width * height * 3 bytes, rows tightly packed
  int orig_w = 0, orig_h = 0;  // full-resolution size of the encoded image
  int dec_w = 0, dec_h = 0;    // decoded size (orig at scale_num / 8, rounded up)
  int scale_num = 8;           // DCT scale numerator (8 = full size; always 8 for PNG)
  bool train = false;          // RandomResizedCrop (+ flip) instead of resize + center crop
  int top = 0, left = 0, crop_h = 0, crop_w = 0;  // train crop rect, in ORIGINAL pixels
  bool flip = false;
  bool cropped = false;  // packed pixels are only the crop rect (train at scale 8)
};

struct DecodedBatch {
  std::vector<DecodedSample> samples;     // [B], in batch order
  AlignedBuffer<uint8_t> packed;          // every sample's pixels, at samples[i].offset
  size_t bytes = 0;                       // bytes of `packed` in use
  std::vector<AlignedBuffer<uint8_t>> staging;  // per-sample worker output before packing (reused)
};

// Packs staging[0..n) into `packed` at 64-byte aligned offsets and fills each sample's offset and bytes.
void pack_decoded(DecodedBatch& d);

}  // namespace bt::loader
