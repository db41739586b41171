// Which TIFF sample layouts bridgetune reads and how each becomes RGB8: Pillow 9.4's TiffImagePlugin OPEN_INFO
// table (photometric, sample format, bits per sample, samples, extra samples -> mode), its unpackers and
// convert("RGB"), for the layouts photographs and scans use. Internal to bt_media (media/decode_tiff.cpp reads
// the samples with libtiff, which has undone the fill order, the predictor and the byte order).
//  - min-is-white/black 1, 2, 4, 8 bits (scaled to 0..255, min-is-white inverted); 16 bits: mode I;16, clipped
//    to 255 as convert("RGB") does (min-is-white not inverted, as Pillow's table has it; big-endian min-is-white
//    16-bit is not in that table and is refused); grey + unassociated alpha (LA);
//  - RGB 8/16 bits (16: the high byte), with extra samples: unassociated or unspecified alpha and padding are
//    dropped, associated (premultiplied) alpha is divided out first (Pillow's RGBa unpacker: c * 255 / a);
//  - palette 1, 2, 4, 8 bits (the colour map's high bytes), palette + alpha; CMYK 8 bits (+ padding), 16 bits
//    little-endian, converted by Pillow's cmyk2rgb;
//  - YCbCr: JPEG-compressed and interleaved, libjpeg's RGB (Pillow sets JPEGCOLORMODE_RGB); other compressed
//    YCbCr through libtiff's RGBA interface as Pillow does; uncompressed YCbCr is refused (Pillow misreads it).
// Anything else (float or signed samples, 12 or 32 bits, LAB, more than 6 samples) is refused, as Pillow refuses
// most of them; so is a separate-planes layout whose conversion needs all samples of a pixel at once.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bt::media::detail {

enum class TiffKind { kGrey, kGrey16, kRgb, kRgbPremultiplied, kPalette, kCmyk, kRgbaInterface };

struct TiffTags {
  uint32_t width = 0, height = 0;
  int bits = 1, samples = 1, photometric = 0, compression = 1, planar = 1, sample_format = 1;
  std::vector<int> extra;  // ExtraSamples: 0 unspecified, 1 associated alpha, 2 unassociated alpha
  bool big_endian = false;
};

struct TiffLayout {
  TiffKind kind = TiffKind::kGrey;
  int bits = 8, samples = 1;
  bool invert = false;     // min-is-white grey
  bool jpeg_rgb = false;   // JPEG-compressed YCbCr: ask libtiff (libjpeg) for RGB
  bool planar = false;     // one plane per sample
};

// Pillow's table applied to the tags: the layout, or throws bt::Error "unsupported TIFF layout (...)".
TiffLayout tiff_layout(const TiffTags& t);

// Whether plane `p` of a separate-planes image contributes to RGB (only straight-alpha layouts are read planar).
bool tiff_plane_used(const TiffLayout& l, int p);

// Converts pixel x of a row of decoded samples (contiguous samples; for a planar image, the row of plane
// `plane`) into dst's RGB (a planar plane writes its channel only). `pal` holds the 2^bits colour map entries.
void tiff_pixel(const TiffLayout& l, const uint8_t* row, int x, int plane, const uint8_t* pal, uint8_t* dst);

}  // namespace bt::media::detail
