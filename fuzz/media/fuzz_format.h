// The body of the per-format decoder fuzzers (fuzz_decode_webp, _gif, _bmp, _tiff): bytes that sniff as the
// fuzzer's format go through the header probe, the full decode and the eval/train transform; anything else is
// skipped, so each fuzzer spends its time in one decoder. Any bytes must decode or throw bt::Error; never crash,
// hang, leak, read out of bounds or allocate past the decode budget (libFuzzer's -rss_limit_mb in the smoke).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/error.h"
#include "media/decode.h"
#include "media/transform.h"

inline int fuzz_format(const uint8_t* data, size_t size, bt::media::ImageFormat format) {
  using namespace bt::media;
  // A small pixel cap keeps each run fast; the bomb check itself is exercised by any large header.
  constexpr uint64_t kMaxPixels = 1 << 22;
  const std::span<const uint8_t> bytes(data, size);
  if (sniff_format(bytes) != format) return 0;
  static auto scratch = make_scratch();
  try {
    ImageU8 img;
    decode_rgb8(bytes, kMaxPixels, img);
    TransformSpec spec;
    spec.image_size = 24;
    spec.max_image_pixels = kMaxPixels;
    spec.mode = size % 3 ? TransformMode::kTrain : TransformMode::kEval;
    std::vector<uint8_t> out(24 * 24 * 3);
    transform_to_u8(bytes, spec, size, out.data(), *scratch);
  } catch (const bt::Error&) {
  }
  return 0;
}
