// BMP, a small decoder of our own (Debian packages no maintained BMP library; the format is a header and rows),
// written to Pillow 9.4's BmpImagePlugin so that convert("RGB") is matched exactly, and nothing else is read:
//  - headers: OS/2 v1 (12 bytes, 3-byte palette entries) and Windows v3/OS/2 v2/v4/v5 (40, 64, 108, 124); a
//    negative height (top byte 0xFF) is a top-down image, otherwise the first row stored is the bottom one;
//  - 1, 4 and 8 bits: a palette (`colors` entries, or 2^bits); an index past it reads grey, as Pillow's mode P
//    and L do; 16 bits: 5-5-5; 24: BGR; 32: BGRX (alpha ignored, as convert("RGB") drops it);
//  - BI_BITFIELDS: the masks Pillow supports (32-bit byte orders, 24-bit BGR, 16-bit 5-6-5 and 5-5-5), masks
//    after a 40-byte header or inside a longer one;
//  - RLE8/RLE4 as Pillow's BmpRleDecoder reads them, its quirks included (a delta escape skips 2 bytes before
//    its offsets; absolute runs of RLE4 read n/2 bytes; padding to the file's even offsets); data that ends before
//    the last pixel is an error ("not enough image data"), as in Pillow;
//  - the data offset is the header's, except Pillow's fix for a palette the offset leaves out.
// Layouts Pillow refuses (other depths, compressions or masks, palettes over 256 entries) or misreads (a 4-bit
// image with a 16-level identity grey palette, read as bytes) are refused. Every read is bounds-checked.
#include <cstring>
#include <vector>

#include "common/error.h"
#include "media/decoders.h"

namespace bt::media::detail {
namespace {

uint32_t le16(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8; }
uint32_t le32(const uint8_t* p) { return le16(p) | le16(p + 2) << 16; }

enum class Pixels { kPalette, kBgr15, kBgr16, kBgr24, kBytes32 };
enum : uint32_t { kRaw = 0, kRle8 = 1, kRle4 = 2, kBitfields = 3 };

struct Bmp {
  uint64_t width = 0, height = 0;
  bool top_down = false;
  int bits = 0;
  uint32_t compression = kRaw;
  Pixels kind = Pixels::kPalette;
  int byte_of[3] = {2, 1, 0};  // 32-bit: the byte holding R, G, B
  uint8_t pal[256 * 3] = {};
  int ncolors = 0;
  uint64_t offset = 0, stride = 0;
};

bool masks_are(const uint32_t* m, uint32_t r, uint32_t g, uint32_t b, uint32_t a) {
  return m[0] == r && m[1] == g && m[2] == b && m[3] == a;
}

int byte_of_mask(uint32_t m) { return m == 0xFF ? 0 : m == 0xFF00 ? 1 : m == 0xFF0000 ? 2 : 3; }

void read_bitfields(Bmp& m, const uint32_t* mask) {
  if (m.bits == 32) {
    const bool ok = masks_are(mask, 0xFF0000, 0xFF00, 0xFF, 0) || masks_are(mask, 0xFF000000, 0xFF0000, 0xFF00, 0) ||
                    masks_are(mask, 0xFF000000, 0xFF0000, 0xFF00, 0xFF) ||
                    masks_are(mask, 0xFF, 0xFF00, 0xFF0000, 0xFF000000) ||
                    masks_are(mask, 0xFF0000, 0xFF00, 0xFF, 0xFF000000) || masks_are(mask, 0, 0, 0, 0);
    if (!ok) fail("unsupported BMP bitfields layout");
    m.kind = Pixels::kBytes32;
    if (mask[0] != 0)
      for (int c = 0; c < 3; ++c) m.byte_of[c] = byte_of_mask(mask[c]);
  } else if (m.bits == 24 && masks_are(mask, 0xFF0000, 0xFF00, 0xFF, mask[3])) {
    m.kind = Pixels::kBgr24;
  } else if (m.bits == 16 && masks_are(mask, 0xF800, 0x7E0, 0x1F, mask[3])) {
    m.kind = Pixels::kBgr16;
  } else if (m.bits == 16 && masks_are(mask, 0x7C00, 0x3E0, 0x1F, mask[3])) {
    m.kind = Pixels::kBgr15;
  } else {
    fail("unsupported BMP bitfields layout");
  }
}

// The palette at `at` (entries of `pad` bytes, B G R [X]); Pillow drops a greyscale one (mode 1 or L).
void read_palette(Bmp& m, std::span<const uint8_t> b, uint64_t at, uint64_t colors, int pad) {
  if (colors == 0 || colors > 256) fail("unsupported BMP palette size (", colors, ")");
  if (at + colors * pad > b.size()) fail("truncated BMP (palette)");
  bool grey = true;
  for (uint64_t i = 0; i < colors; ++i) {
    const uint8_t* e = b.data() + at + i * pad;
    const unsigned v = colors == 2 ? (i ? 255 : 0) : unsigned(i);
    grey &= e[0] == v && e[1] == v && e[2] == v;
    m.pal[3 * i] = e[2], m.pal[3 * i + 1] = e[1], m.pal[3 * i + 2] = e[0];
  }
  m.ncolors = static_cast<int>(colors);
  // Pillow reads a dropped palette's pixels as mode 1 or L bytes: right for 1-bit 0/255 and 8-bit grey only.
  if (grey && !((colors == 2 && m.bits == 1) || (colors != 2 && m.bits == 8)))
    fail("unsupported BMP layout (a ", m.bits, "-bit greyscale palette Pillow misreads)");
  if (grey && colors == 2 && m.compression != kRaw) fail("unsupported BMP layout (run-length bilevel)");
}

Bmp parse(std::span<const uint8_t> b) {
  if (b.size() < 18) fail("truncated BMP header");
  Bmp m;
  m.offset = le32(b.data() + 10);
  const uint64_t hsize = le32(b.data() + 14);
  if (hsize != 12 && hsize != 40 && hsize != 64 && hsize != 108 && hsize != 124)
    fail("unsupported BMP header type (", hsize, ")");
  if (14 + hsize > b.size()) fail("truncated BMP header");
  const uint8_t* h = b.data() + 18;  // the header after its size field
  uint64_t colors = 0, palette_at = 14 + hsize;
  int pad = 4;
  uint32_t mask[4] = {0, 0, 0, 0};
  if (hsize == 12) {
    m.width = le16(h), m.height = le16(h + 2), m.bits = int(le16(h + 6)), pad = 3;
  } else {
    m.top_down = h[7] == 0xFF;
    m.width = le32(h);
    m.height = m.top_down ? (uint64_t(1) << 32) - le32(h + 4) : le32(h + 4);
    m.bits = int(le16(h + 10));
    m.compression = le32(h + 12);
    colors = le32(h + 28);
    if (m.compression == kBitfields && hsize >= 56) {
      for (int i = 0; i < 4; ++i) mask[i] = le32(h + 36 + 4 * i);
    } else if (m.compression == kBitfields) {  // three masks follow a 40-byte header
      if (palette_at + 12 > b.size()) fail("truncated BMP header (bitfields)");
      for (int i = 0; i < 3; ++i) mask[i] = le32(b.data() + palette_at + 4 * i);
      palette_at += 12;
    }
  }
  if (m.bits != 1 && m.bits != 4 && m.bits != 8 && m.bits != 16 && m.bits != 24 && m.bits != 32)
    fail("unsupported BMP pixel depth (", m.bits, ")");
  if (colors == 0 && m.bits <= 8) colors = uint64_t(1) << m.bits;
  if (m.offset == 14 + hsize && m.bits <= 8) m.offset += 4 * colors;
  m.kind = m.bits == 16 ? Pixels::kBgr15 : m.bits == 24 ? Pixels::kBgr24 : m.bits == 32 ? Pixels::kBytes32 : Pixels::kPalette;
  if (m.compression == kBitfields)
    read_bitfields(m, mask);
  else if ((m.compression == kRle8 || m.compression == kRle4) && m.bits > 8)
    fail("unsupported BMP layout (run-length coded ", m.bits, "-bit pixels)");
  else if (m.compression != kRaw && m.compression != kRle8 && m.compression != kRle4)
    fail("unsupported BMP compression (", m.compression, ")");
  if (m.kind == Pixels::kPalette) read_palette(m, b, palette_at, colors, pad);
  m.stride = ((m.width * uint64_t(m.bits) + 31) >> 3) & ~uint64_t(3);
  return m;
}

inline uint8_t scale5(uint32_t v) { return static_cast<uint8_t>(v * 255 / 31); }
inline uint8_t scale6(uint32_t v) { return static_cast<uint8_t>(v * 255 / 63); }

// One stored row of raw pixels -> RGB8.
void convert_row(const Bmp& m, const uint8_t* src, int w, uint8_t* dst) {
  for (int x = 0; x < w; ++x, dst += 3) {
    switch (m.kind) {
      case Pixels::kPalette: {
        const int per = 8 / m.bits, shift = 8 - m.bits * (1 + x % per);
        palette_rgb(m.pal, m.ncolors, (src[x / per] >> shift) & ((1 << m.bits) - 1), dst);
        break;
      }
      case Pixels::kBgr15: {
        const uint32_t p = le16(src + 2 * x);
        dst[0] = scale5(p >> 10 & 31), dst[1] = scale5(p >> 5 & 31), dst[2] = scale5(p & 31);
        break;
      }
      case Pixels::kBgr16: {
        const uint32_t p = le16(src + 2 * x);
        dst[0] = scale5(p >> 11 & 31), dst[1] = scale6(p >> 5 & 63), dst[2] = scale5(p & 31);
        break;
      }
      case Pixels::kBgr24: dst[0] = src[3 * x + 2], dst[1] = src[3 * x + 1], dst[2] = src[3 * x]; break;
      case Pixels::kBytes32:
        for (int c = 0; c < 3; ++c) dst[c] = src[4 * x + m.byte_of[c]];
        break;
    }
  }
}

// Pillow's BmpRleDecoder: palette indices of the whole image, rows in stored order. Writes past the image are
// dropped (Pillow ignores them too); the loop ends once every pixel is set.
void decode_rle(const Bmp& m, std::span<const uint8_t> b, std::vector<uint8_t>& idx) {
  const size_t W = size_t(m.width), N = W * size_t(m.height);
  const bool rle4 = m.compression == kRle4;
  idx.assign(N, 0);
  size_t len = 0, x = 0, pos = size_t(m.offset);
  auto put = [&](uint8_t v) {
    if (len < N) idx[len] = v;
    ++len;
  };
  while (len < N) {
    if (pos + 2 > b.size()) break;
    const size_t count = b[pos];
    const uint8_t byte = b[pos + 1];
    pos += 2;
    if (count) {  // encoded run, clipped to the row
      const size_t n = x + count > W ? (W > x ? W - x : 0) : count;
      for (size_t i = 0; i < n; ++i) put(rle4 ? (i % 2 ? byte & 15 : byte >> 4) : byte);
      x += n;
    } else if (byte == 0) {  // end of line
      while (len % W) put(0);
      x = 0;
    } else if (byte == 1) {  // end of bitmap
      break;
    } else if (byte == 2) {  // delta: Pillow reads two bytes, then the offsets from the two after them
      if (pos + 4 > b.size()) fail("truncated BMP (run-length delta)");
      const size_t skip = b[pos + 2] + size_t(b[pos + 3]) * W;
      pos += 4;
      for (size_t i = 0; i < skip && len < N; ++i) put(0);
      x = len % W;
    } else {  // absolute run
      const size_t want = rle4 ? byte / 2 : byte, got = std::min(want, b.size() - pos);
      for (size_t i = 0; i < got; ++i) {
        if (rle4) {
          put(b[pos + i] >> 4), put(b[pos + i] & 15);
        } else {
          put(b[pos + i]);
        }
      }
      pos += got;
      if (got < want) break;
      x += byte;
      if (pos % 2) ++pos;  // word alignment, of the file offset
    }
  }
  if (len < N) fail("truncated BMP (not enough image data)");
}

}  // namespace

ImageInfo probe_bmp(std::span<const uint8_t> b, uint64_t max_pixels) {
  const Bmp m = parse(b);
  check_pixels(m.width, m.height, max_pixels);
  ImageInfo info;
  info.width = static_cast<int>(m.width);
  info.height = static_cast<int>(m.height);
  if (m.compression == kRle8 || m.compression == kRle4) info.buffer_bytes = m.width * m.height;
  return info;
}

void decode_bmp(std::span<const uint8_t> b, ImageU8& out) {
  const Bmp m = parse(b);
  const int w = static_cast<int>(m.width), h = static_cast<int>(m.height);
  out.reset(w, h);
  if (m.compression == kRle8 || m.compression == kRle4) {
    std::vector<uint8_t> idx;
    decode_rle(m, b, idx);
    for (int y = 0; y < h; ++y) {
      const uint8_t* src = idx.data() + size_t(y) * size_t(w);
      uint8_t* dst = out.row(m.top_down ? y : h - 1 - y);
      for (int x = 0; x < w; ++x) palette_rgb(m.pal, m.ncolors, src[x], dst + 3 * x);
    }
    return;
  }
  if (m.offset > b.size() || m.stride * m.height > b.size() - m.offset) fail("truncated BMP (image data)");
  for (int y = 0; y < h; ++y)
    convert_row(m, b.data() + m.offset + m.stride * uint64_t(y), w, out.row(m.top_down ? y : h - 1 - y));
}

}  // namespace bt::media::detail
