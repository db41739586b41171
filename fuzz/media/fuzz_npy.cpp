// libFuzzer target for the .npy matrix reader (media/npy.h, what `bridgetune search` reads from an index): any
// bytes must parse with a shape that fits the data, or throw bt::Error; never crash or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "common/error.h"
#include "media/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const bt::media::NpyMatrix m = bt::media::parse_npy_f32_matrix(std::span<const uint8_t>(data, size), "fuzz.npy");
    float sum = 0;
    const size_t n = size_t(m.rows) * size_t(m.cols);
    for (size_t i = 0; i < n; ++i) {
      float v;
      std::memcpy(&v, data + m.data_offset + i * 4, 4);  // every float the shape names is inside the input
      sum += v;
    }
    (void)sum;
  } catch (const bt::Error&) {
  }
  return 0;
}
