// The per-format decoders behind media/decode.h (internal to bt_media). Each probe_X reads the header only and
// fills ImageInfo (size, what a decode holds); each decode_X writes the first frame or page as Pillow's
// Image.open(...).convert("RGB") gives it, full size, into `out`. All throw bt::Error with the reason only.
// decode.cpp checks the pixel cap and the decode budget (check_decode_budget) before any decode_X runs.
#pragma once
#include <cstdint>
#include <span>

#include "media/decode.h"

namespace bt::media::detail {

// Refuses an empty size or more than max_pixels pixels ("... (decompression bomb?)"), before any allocation.
void check_pixels(uint64_t w, uint64_t h, uint64_t max_pixels);

// Pillow's palette lookup for mode P: an index past the palette's end reads the grey ramp (i, i, i), which is also
// what a greyscale palette Pillow drops (mode L: the index is the grey) gives. `pal` is `n` RGB triplets.
inline void palette_rgb(const uint8_t* pal, int n, int index, uint8_t* rgb) {
  if (index < n) {
    rgb[0] = pal[3 * index], rgb[1] = pal[3 * index + 1], rgb[2] = pal[3 * index + 2];
  } else {
    rgb[0] = rgb[1] = rgb[2] = static_cast<uint8_t>(index);
  }
}

// Pillow's cmyk2rgb (Convert.c) of n pixels, C M Y K as stored (not inverted).
void cmyk_to_rgb(const uint8_t* cmyk, size_t n, uint8_t* rgb);

ImageInfo probe_webp(std::span<const uint8_t> b, uint64_t max_pixels);
void decode_webp(std::span<const uint8_t> b, ImageU8& out);

ImageInfo probe_gif(std::span<const uint8_t> b, uint64_t max_pixels);
void decode_gif(std::span<const uint8_t> b, ImageU8& out);

ImageInfo probe_bmp(std::span<const uint8_t> b, uint64_t max_pixels);
void decode_bmp(std::span<const uint8_t> b, ImageU8& out);

ImageInfo probe_tiff(std::span<const uint8_t> b, uint64_t max_pixels);
void decode_tiff(std::span<const uint8_t> b, uint64_t max_pixels, ImageU8& out);

}  // namespace bt::media::detail
