// Encoded bytes -> RGB8, the way Pillow's Image.open(...).convert("RGB") sees them.
//  - The format is sniffed from the magic bytes only, never a file name: JPEG FF D8 FF, PNG's 8-byte signature,
//    RIFF....WEBP, GIF87a/GIF89a, BM, and TIFF's II*\0 / MM\0* (and the variants Pillow accepts).
//  - JPEG (TurboJPEG, accurate ISLOW IDCT + fancy upsampling = what Pillow's libjpeg does): baseline,
//    progressive, grayscale, CMYK/YCCK (Adobe inverted, converted with Pillow's cmyk2rgb). A JPEG may be
//    decoded at a reduced DCT scale (scale_num/8); see choose_jpeg_scale() and media/plan.h.
//  - PNG (libspng): palette, gray, alpha (dropped, as convert("RGB") does), 16-bit (high byte; 16-bit gray
//    is clipped to 255 as Pillow's I -> RGB conversion does).
//  - WebP (libwebp), GIF (giflib), BMP (media/decode_bmp.cpp), TIFF (libtiff): the first frame of an animation or
//    the first page (IFD) of a TIFF, as Pillow opens it; each one's Pillow semantics are stated in its file
//    (media/decode_webp.cpp, decode_gif.cpp, decode_bmp.cpp, decode_tiff.cpp). Transparency is dropped, as
//    convert("RGB") drops it (no compositing onto a background); layouts Pillow refuses or misreads are refused.
//  - Images with more than max_image_pixels pixels are refused from the header, before any allocation; so is a
//    full decode whose buffers (decode_bytes: the RGB8 output, a CMYK or 16-bit grey intermediate, a multi-scan
//    JPEG's DCT coefficients) would exceed decode_budget(max_image_pixels), naming --max_image_pixels.
//  - A non-interlaced PNG can instead be decoded a block of rows at a time (PngRowDecoder, png_streams()), the
//    same pixels decode_rgb8 gives, so the CPU transform never holds it whole (media/transform.cpp).
//  - Any bad input throws bt::Error with the reason only (the caller names the file).
// libjpeg warnings: "Premature end of JPEG file" / "premature end of data segment" mean truncated data and
// are errors (Pillow raises "image file is truncated"); other warnings (e.g. extraneous bytes before a
// marker, in the header or in the scans) are tolerated, as Pillow tolerates them.
#pragma once
#include <cstdint>
#include <memory>
#include <span>

#include "media/image.h"

namespace bt::media {

enum class ImageFormat { kUnknown, kJpeg, kPng, kWebp, kGif, kBmp, kTiff };

ImageFormat sniff_format(std::span<const uint8_t> encoded);
const char* format_name(ImageFormat f);  // "JPEG", "PNG", "WebP", "GIF", "BMP", "TIFF"

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int width = 0;
  int height = 0;
  // What a full decode holds besides its RGB8 output (decode_bytes()):
  uint64_t coefficient_bytes = 0;  // a JPEG of several scans (progressive, or components scanned apart): libjpeg
                                   // keeps every DCT coefficient (2 bytes) of the whole image until the last scan
  int temp_bytes_per_pixel = 0;    // decoded first to CMYK (JPEG: 4) or 16-bit grey (PNG: 2), then converted
  bool interlaced = false;         // an Adam7 PNG: its rows arrive in 7 passes, so it is decoded whole
  uint64_t buffer_bytes = 0;       // the other decoders' own buffers: a lossless WebP's ARGB, a TIFF's tile or
                                   // strip, an RLE BMP's indices
};

// Header only (and a JPEG's marker segments up to its first scan): format, full-resolution size and what a full
// decode holds. Throws on unknown/corrupt headers and on bombs.
ImageInfo probe_image(std::span<const uint8_t> encoded, uint64_t max_image_pixels);

// The bytes decode_rgb8() holds for an image at scale_num/8: output, intermediate and coefficient buffers.
uint64_t decode_bytes(const ImageInfo& info, int scale_num);
// What decoding (and resizing) one image may hold: 2 bytes per pixel --max_image_pixels allows (179 MB at Pillow's
// cap), at least 64 MiB. An RGB8 image at the pixel cap takes 3 bytes a pixel, so only the decodes that cannot be
// made small are refused by it: a progressive 4:4:4 JPEG of 9459^2 (537 MB of coefficients), a JPEG decoded at full
// size (--jpeg_dct_scaling false) above 60 Mpx, an interlaced PNG above 60 Mpx; with the ~160 MB the process holds
// it keeps one decode under 400 MB.
uint64_t decode_budget(uint64_t max_image_pixels);
// Throws "image WxH (KIND) needs N to decode..." naming --max_image_pixels when bytes > decode_budget().
void check_decode_budget(const ImageInfo& info, uint64_t bytes, uint64_t max_image_pixels);

// Whether the image is a PNG that PngRowDecoder takes (not interlaced).
bool png_streams(const ImageInfo& info);

// A non-interlaced PNG decoded top to bottom into RGB8 rows, with decode_rgb8's conversions: rows(y, n) decodes
// up to row y + n (rows before y are decoded and dropped) into `block` (n full-width rows + 64 spare bytes, so
// SIMD readers may read past a row's end) and returns the first; throws bt::Error (reason only) on corrupt or
// truncated data and when y is below the rows already decoded.
class PngRowDecoder {
 public:
  PngRowDecoder(std::span<const uint8_t> png, uint64_t max_image_pixels, AlignedBuffer<uint8_t>& block);
  ~PngRowDecoder();
  PngRowDecoder(const PngRowDecoder&) = delete;
  PngRowDecoder& operator=(const PngRowDecoder&) = delete;
  int width() const;
  int height() const;
  const uint8_t* rows(int y, int n, size_t* stride);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// DCT scale numerator (denominator 8) for decoding a width x height JPEG of which a region_w x region_h region
// is resampled to `size` px: the largest TurboJPEG reduction keeping that region >= size px on both axes.
// 8 = full size. The one place this is decided (media/plan.h calls it).
int choose_jpeg_scale(int width, int height, double region_w, double region_h, int size);

// Decoded size of `dim` at scale_num/8 (TurboJPEG's TJSCALED: rounds up).
inline int jpeg_scaled(int dim, int scale_num) { return (dim * scale_num + 7) / 8; }

// Decodes to RGB8. scale_num (1..8, over 8) applies to JPEGs only; PNGs are always full size.
void decode_rgb8(std::span<const uint8_t> encoded, uint64_t max_image_pixels, ImageU8& out,
                 int jpeg_scale_num = 8);
// The same with the header already probed (probe_image(encoded, max_image_pixels)).
void decode_rgb8(std::span<const uint8_t> encoded, const ImageInfo& info, uint64_t max_image_pixels, ImageU8& out,
                 int jpeg_scale_num = 8);

}  // namespace bt::media
