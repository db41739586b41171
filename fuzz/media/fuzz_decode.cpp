// libFuzzer target for the decode wrapper (JPEG/PNG; WebP, GIF, BMP and TIFF have fuzz_decode_<format> too), the
// transform behind it (a PNG decoded row by row into the resize, the decode budget) and the JPEG marker walk
// (media/jpeg_frame.h): any bytes must either decode or throw bt::Error; never crash, hang, leak or read out of
// bounds.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/error.h"
#include "media/decode.h"
#include "media/jpeg_frame.h"
#include "media/transform.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bt::media;
  // A small pixel cap keeps each run fast; the bomb check itself is exercised by any large header.
  constexpr uint64_t kMaxPixels = 1 << 22;
  const std::span<const uint8_t> bytes(data, size);
  static auto scratch = make_scratch();
  try {
    // The encoded mode's marker walk (loader/decode_only.cpp routes on it) and the decode budget's reading of it.
    (void)jpeg_coefficient_bytes(read_jpeg_frame(bytes));
  } catch (const bt::Error&) {
  }
  (void)without_extraneous_header_bytes(bytes);  // never throws
  try {
    ImageU8 img;
    decode_rgb8(bytes, kMaxPixels, img, size % 2 ? 8 : 1 + static_cast<int>(size % 8));
    TransformSpec spec;
    spec.image_size = 24;
    spec.max_image_pixels = kMaxPixels;
    spec.mode = size % 3 ? TransformMode::kTrain : TransformMode::kEval;
    spec.dct_scaling = size % 5 != 0;
    std::vector<uint8_t> out(24 * 24 * 3);
    transform_to_u8(bytes, spec, size, out.data(), *scratch);
  } catch (const bt::Error&) {
  }
  return 0;
}
