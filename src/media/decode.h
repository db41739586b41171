// Encoded bytes -> RGB8, the way Pillow's Image.open(...).convert("RGB") sees them.
//  - The format is sniffed from the magic bytes only (JPEG FF D8 FF, PNG's 8-byte signature).
//  - JPEG (TurboJPEG, accurate ISLOW IDCT + fancy upsampling = what Pillow's libjpeg does): baseline,
//    progressive, grayscale, CMYK/YCCK (Adobe inverted, converted with Pillow's cmyk2rgb). A JPEG may be
//    decoded at a reduced DCT scale (scale_num/8); see choose_jpeg_scale() and media/plan.h.
//  - PNG (libspng): palette, gray, alpha (dropped, as convert("RGB") does), 16-bit (high byte; 16-bit gray
//    is clipped to 255 as Pillow's I -> RGB conversion does).
//  - Images with more than max_image_pixels pixels are refused from the header, before any allocation.
//  - Any bad input throws bt::Error with the reason only (the caller names the file).
// libjpeg warnings: "Premature end of JPEG file" / "premature end of data segment" mean truncated data and
// are errors (Pillow raises "image file is truncated"); other warnings (e.g. extraneous bytes before a
// marker) are tolerated, as Pillow tolerates them.
#pragma once
#include <cstdint>
#include <span>

#include "media/image.h"

namespace bt::media {

enum class ImageFormat { kUnknown, kJpeg, kPng };

ImageFormat sniff_format(std::span<const uint8_t> encoded);

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int width = 0;
  int height = 0;
};

// Header only: format and full-resolution size. Throws on unknown/corrupt headers and on bombs.
ImageInfo probe_image(std::span<const uint8_t> encoded, uint64_t max_image_pixels);

// DCT scale numerator (denominator 8) for decoding a width x height JPEG of which a region_w x region_h region
// is resampled to `size` px: the largest TurboJPEG reduction keeping that region >= size px on both axes.
// 8 = full size. The one place this is decided (media/plan.h calls it).
int choose_jpeg_scale(int width, int height, double region_w, double region_h, int size);

// Decoded size of `dim` at scale_num/8 (TurboJPEG's TJSCALED: rounds up).
inline int jpeg_scaled(int dim, int scale_num) { return (dim * scale_num + 7) / 8; }

// Decodes to RGB8. scale_num (1..8, over 8) applies to JPEGs only; PNGs are always full size.
void decode_rgb8(std::span<const uint8_t> encoded, uint64_t max_image_pixels, ImageU8& out,
                 int jpeg_scale_num = 8);

}  // namespace bt::media
