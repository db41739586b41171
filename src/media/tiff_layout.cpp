#include "media/tiff_layout.h"

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "media/decoders.h"

namespace bt::media::detail {
namespace {

[[noreturn]] void unsupported(const TiffTags& t) {
  fail("unsupported TIFF layout (photometric ", t.photometric, ", ", t.samples, " samples of ", t.bits,
       " bits, ", t.extra.size(), " extra)");
}

// Pillow's RGB rows: the extra samples after R, G, B are one alpha or padding followed by padding only.
// Returns 0 straight (or none), 1 premultiplied, -1 not in the table.
int rgb_extras(const TiffTags& t) {
  const size_t ne = t.extra.size();
  if (t.samples == 4 && ne == 0) return 0;  // "missing ExtraSamples": Pillow reads RGBA
  if (ne != size_t(t.samples - 3) || ne > 3 || (t.bits == 16 && ne > 1)) return -1;
  for (size_t i = 1; i < ne; ++i)
    if (t.extra[i] != 0) return -1;
  const int first = ne ? t.extra[0] : 0;
  if (first == 999 && ne == 1 && t.bits == 8) return 0;  // Corel Draw 10
  return first == 1 ? 1 : first == 0 || first == 2 ? 0 : -1;
}

TiffLayout layout_of(const TiffTags& t) {
  TiffLayout l;
  l.bits = t.bits, l.samples = t.samples;
  const size_t ne = t.extra.size();
  const bool low_bits = t.bits == 1 || t.bits == 2 || t.bits == 4 || t.bits == 8;
  switch (t.photometric) {
    case 0:
    case 1:
      if (t.samples == 1 && ne == 0 && low_bits) {
        l.kind = TiffKind::kGrey, l.invert = t.photometric == 0;
        return l;
      }
      if (t.samples == 1 && ne == 0 && t.bits == 16 && !(t.photometric == 0 && t.big_endian)) {
        l.kind = TiffKind::kGrey16;
        return l;
      }
      if (t.photometric == 1 && t.samples == 2 && ne == 1 && t.extra[0] == 2 && t.bits == 8) return l;  // LA
      break;
    case 2: {
      const int ex = t.samples >= 3 && (t.bits == 8 || t.bits == 16) ? (t.samples == 3 && ne == 0 ? 0 : rgb_extras(t)) : -1;
      if (ex < 0) break;
      l.kind = ex ? TiffKind::kRgbPremultiplied : TiffKind::kRgb;
      return l;
    }
    case 3:
      if ((t.samples == 1 && ne == 0 && low_bits) || (t.samples == 2 && ne == 1 && t.extra[0] == 2 && t.bits == 8)) {
        l.kind = TiffKind::kPalette;
        return l;
      }
      break;
    case 5:
      if ((t.bits == 8 && size_t(t.samples) == 4 + ne && ne <= 2 && std::count(t.extra.begin(), t.extra.end(), 0) == long(ne)) ||
          (t.bits == 16 && t.samples == 4 && ne == 0 && !t.big_endian)) {
        l.kind = TiffKind::kCmyk;
        return l;
      }
      break;
    case 6:
      if (t.bits != 8 || t.samples != 3 || ne != 0) break;
      if (t.compression == 1) fail("unsupported TIFF layout (uncompressed YCbCr, which Pillow misreads)");
      if (t.compression == 7 && t.planar == 1) {
        l.kind = TiffKind::kRgb, l.jpeg_rgb = true;
      } else {
        l.kind = TiffKind::kRgbaInterface;
      }
      return l;
    default:
      break;
  }
  unsupported(t);
}

inline unsigned u16_at(const uint8_t* p, size_t i) {
  uint16_t v;
  std::memcpy(&v, p + 2 * i, 2);  // libtiff hands 16-bit samples over in host order
  return v;
}

}  // namespace

TiffLayout tiff_layout(const TiffTags& tags) {
  TiffTags t = tags;
  if (t.compression == 6) t.photometric = 6;  // old-style JPEG: Pillow takes it as YCbCr whatever the tag says
  if (t.samples > 6) fail("unsupported TIFF layout (", t.samples, " samples per pixel)");
  if (t.sample_format != 1) fail("unsupported TIFF sample format (", t.sample_format, ": signed or floating-point)");
  TiffLayout l = layout_of(t);
  l.planar = t.planar == 2 && t.samples > 1 && l.kind != TiffKind::kRgbaInterface;
  if (l.planar && !(l.kind == TiffKind::kGrey || l.kind == TiffKind::kRgb || l.kind == TiffKind::kPalette))
    fail("unsupported TIFF layout (separate planes of photometric ", t.photometric, ")");
  return l;
}

bool tiff_plane_used(const TiffLayout& l, int p) { return l.kind == TiffKind::kRgb ? p < 3 : p == 0; }

void tiff_pixel(const TiffLayout& l, const uint8_t* row, int x, int plane, const uint8_t* pal, uint8_t* dst) {
  const size_t spp = l.planar ? 1 : size_t(l.samples), i = size_t(x) * spp;
  auto sample8 = [&](size_t s) -> unsigned { return l.bits == 16 ? u16_at(row, i + s) >> 8 : row[i + s]; };
  if (l.planar) {
    const unsigned v = sample8(0);
    if (l.kind == TiffKind::kRgb) dst[plane] = uint8_t(v);
    else if (l.kind == TiffKind::kPalette) palette_rgb(pal, 1 << l.bits, int(v), dst);
    else dst[0] = dst[1] = dst[2] = uint8_t(v);
    return;
  }
  switch (l.kind) {
    case TiffKind::kGrey: {
      unsigned v;
      if (l.bits == 8) {
        v = row[i];
      } else {
        const size_t bit = size_t(x) * size_t(l.bits);
        v = (row[bit / 8] >> (8 - l.bits - bit % 8)) & ((1u << l.bits) - 1);
        v = v * (255 / ((1u << l.bits) - 1));  // 1 bit: x255, 2: x85, 4: x17
      }
      if (l.invert) v = 255 - v;
      dst[0] = dst[1] = dst[2] = uint8_t(v);
      return;
    }
    case TiffKind::kGrey16:
      dst[0] = dst[1] = dst[2] = uint8_t(std::min(u16_at(row, i), 255u));
      return;
    case TiffKind::kRgb:
      for (int c = 0; c < 3; ++c) dst[c] = uint8_t(sample8(size_t(c)));
      return;
    case TiffKind::kRgbPremultiplied: {
      const unsigned a = sample8(3);
      for (int c = 0; c < 3; ++c) {
        const unsigned v = sample8(size_t(c));
        dst[c] = a == 0 ? 0 : a == 255 ? uint8_t(v) : uint8_t(std::min(v * 255 / a, 255u));
      }
      return;
    }
    case TiffKind::kPalette: {
      unsigned v = row[i];
      if (l.bits < 8) {
        const size_t bit = size_t(x) * size_t(l.bits);
        v = (row[bit / 8] >> (8 - l.bits - bit % 8)) & ((1u << l.bits) - 1);
      }
      palette_rgb(pal, 1 << l.bits, int(v), dst);
      return;
    }
    case TiffKind::kCmyk: {
      const uint8_t cmyk[4] = {uint8_t(sample8(0)), uint8_t(sample8(1)), uint8_t(sample8(2)), uint8_t(sample8(3))};
      cmyk_to_rgb(cmyk, 1, dst);
      return;
    }
    case TiffKind::kRgbaInterface:
      break;  // decoded by libtiff's RGBA interface, never here
  }
}

}  // namespace bt::media::detail
