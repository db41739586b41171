// An owned RGB8 image: rows of width * 3 bytes, interleaved R,G,B, tightly packed (stride = width * 3).
// The buffer is reused across images (AlignedBuffer never shrinks), so a per-worker Image costs no
// allocation in steady state.
#pragma once
#include <cstddef>
#include <cstdint>

#include "common/aligned_buffer.h"

namespace bt::media {

struct ImageU8 {
  int width = 0;
  int height = 0;
  AlignedBuffer<uint8_t> pixels;
  // The decoder warned and decoded anyway (libjpeg's "Corrupt JPEG data: ..." warnings, media/decode.h): the
  // pixels are what Pillow gives; the loader counts such images for the run's report.
  bool decoded_with_warnings = false;

  void reset(int w, int h) {
    width = w;
    height = h;
    decoded_with_warnings = false;
    // One spare byte: the SIMD transposer reads/writes pixels as 4-byte words.
    pixels.resize(static_cast<size_t>(w) * h * 3 + 1);
  }
  size_t stride() const { return static_cast<size_t>(width) * 3; }
  uint8_t* row(int y) { return pixels.data() + y * stride(); }
  const uint8_t* row(int y) const { return pixels.data() + y * stride(); }
};

}  // namespace bt::media
