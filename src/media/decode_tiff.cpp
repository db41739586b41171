// TIFF (libtiff, from memory), the first page (IFD) as Pillow 9.4 opens it: libtiff decodes the samples (any codec
// it has: none, LZW, deflate, PackBits, JPEG, CCITT, ...), media/tiff_layout.h turns them into RGB8 as Pillow's
// table and convert("RGB") do, and the Orientation tag is applied as Pillow's TiffImagePlugin applies it on load
// (2-8: flips, rotations, transposes; a 5-8 image is its height wide).
// Bounded: every libtiff allocation is capped at the decode budget (TIFFOpenOptionsSetMaxSingleMemAlloc), and the
// samples are read a row (striped images), a tile, or a strip of RGBA (libtiff's RGBA interface) at a time, so a
// TIFF declaring huge strips or tiles is refused by the budget before they are allocated. libtiff's messages go
// to this decode's own handler (thread-safe), never to stderr.
#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/terminal.h"
#include "media/decoders.h"
#include "media/tiff_layout.h"

namespace bt::media::detail {
namespace {

struct Source {
  std::span<const uint8_t> b;
  uint64_t pos = 0;
  std::string error;  // libtiff's first error message
};

tmsize_t read_proc(thandle_t h, void* dst, tmsize_t n) {
  Source& s = *static_cast<Source*>(h);
  const uint64_t left = s.pos < s.b.size() ? s.b.size() - s.pos : 0, k = std::min<uint64_t>(left, uint64_t(std::max<tmsize_t>(n, 0)));
  if (k) std::memcpy(dst, s.b.data() + s.pos, k);
  s.pos += k;
  return tmsize_t(k);
}
tmsize_t write_proc(thandle_t, void*, tmsize_t) { return 0; }
toff_t seek_proc(thandle_t h, toff_t off, int whence) {
  Source& s = *static_cast<Source*>(h);
  s.pos = whence == SEEK_SET ? off : whence == SEEK_CUR ? s.pos + off : s.b.size() + off;
  return s.pos;
}
int close_proc(thandle_t) { return 0; }
toff_t size_proc(thandle_t h) { return static_cast<Source*>(h)->b.size(); }
int map_proc(thandle_t h, void** base, toff_t* size) {
  Source& s = *static_cast<Source*>(h);
  *base = const_cast<uint8_t*>(s.b.data());  // libtiff only reads a mapping opened "r"
  *size = s.b.size();
  return 1;
}
void unmap_proc(thandle_t, void*, toff_t) {}

int on_error(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  Source& s = *static_cast<Source*>(user);
  if (s.error.empty()) {
    char msg[256];
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    s.error = printable(std::string(module ? module : "libtiff") + ": " + msg);
  }
  return 1;
}
int on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }  // Pillow silences them too

class Tiff {
 public:
  Tiff(std::span<const uint8_t> b, uint64_t max_alloc) : src_{b} {
    TIFFOpenOptions* o = TIFFOpenOptionsAlloc();
    if (!o) fail("cannot initialise libtiff");
    TIFFOpenOptionsSetMaxSingleMemAlloc(o, tmsize_t(std::min<uint64_t>(max_alloc, uint64_t(1) << 62)));
    TIFFOpenOptionsSetErrorHandlerExtR(o, on_error, &src_);
    TIFFOpenOptionsSetWarningHandlerExtR(o, on_warning, nullptr);
    t_ = TIFFClientOpenExt("tiff", "r", &src_, read_proc, write_proc, seek_proc, close_proc, size_proc, map_proc,
                           unmap_proc, o);
    TIFFOpenOptionsFree(o);
    if (!t_) error("header");
  }
  ~Tiff() {
    if (t_) TIFFClose(t_);
  }
  Tiff(const Tiff&) = delete;
  Tiff& operator=(const Tiff&) = delete;
  TIFF* get() const { return t_; }
  [[noreturn]] void error(const char* what) const {
    const std::string& e = src_.error;
    const bool cut = e.find("end of file") != std::string::npos || e.find("Read error") != std::string::npos;
    fail(cut ? "truncated" : "corrupt", " TIFF (", what, e.empty() ? "" : ": ", e.substr(0, 200), ")");
  }

 private:
  Source src_;
  TIFF* t_ = nullptr;
};

TiffTags read_tags(TIFF* t) {
  TiffTags g;
  uint16_t v16 = 0, n = 0, *extra = nullptr;
  TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &g.width);
  TIFFGetField(t, TIFFTAG_IMAGELENGTH, &g.height);
  if (TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &v16)) g.bits = v16;
  if (TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &v16)) g.samples = v16;
  if (TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &v16)) g.photometric = v16;
  if (TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &v16)) g.compression = v16;
  if (TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &v16)) g.planar = v16;
  if (TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &v16)) g.sample_format = v16;
  if (TIFFGetField(t, TIFFTAG_EXTRASAMPLES, &n, &extra) && extra) g.extra.assign(extra, extra + n);
  g.big_endian = TIFFIsBigEndian(t) != 0;
  return g;
}

int orientation_of(TIFF* t) {
  uint16_t o = 1;
  TIFFGetFieldDefaulted(t, TIFFTAG_ORIENTATION, &o);
  return o >= 1 && o <= 8 ? o : 1;  // Pillow applies 2..8 and ignores any other value
}

// Where source pixel (x, y) of a W x H page lands after Pillow's transpose for `orientation`.
struct Placer {
  uint8_t* px;
  size_t stride;
  int W, H, orientation;
  uint8_t* at(int x, int y) const {
    int ox = x, oy = y;
    switch (orientation) {
      case 2: ox = W - 1 - x; break;
      case 3: ox = W - 1 - x, oy = H - 1 - y; break;
      case 4: oy = H - 1 - y; break;
      case 5: ox = y, oy = x; break;
      case 6: ox = H - 1 - y, oy = x; break;
      case 7: ox = H - 1 - y, oy = W - 1 - x; break;
      case 8: ox = y, oy = W - 1 - x; break;
      default: break;
    }
    return px + size_t(oy) * stride + size_t(ox) * 3;
  }
};

struct Page {
  TiffTags tags;
  TiffLayout layout;
  int orientation = 1;
  uint64_t buffer_bytes = 0;  // the row, tile or RGBA strip read at a time
};

Page read_page(const Tiff& tiff) {
  TIFF* t = tiff.get();
  Page p;
  p.tags = read_tags(t);
  p.layout = tiff_layout(p.tags);
  p.orientation = orientation_of(t);
  uint32_t rps = 0;
  if (p.layout.kind == TiffKind::kRgbaInterface) {
    if (TIFFIsTiled(t)) fail("unsupported TIFF layout (tiled YCbCr)");
    TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &rps);
    p.buffer_bytes = uint64_t(p.tags.width) * std::min<uint64_t>(std::max<uint32_t>(rps, 1), p.tags.height) * 4;
  } else {
    if (p.layout.jpeg_rgb && !TIFFSetField(t, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB)) tiff.error("JPEG colour mode");
    p.buffer_bytes = TIFFIsTiled(t) ? TIFFTileSize64(t) : TIFFScanlineSize64(t);
    if (p.buffer_bytes == 0) tiff.error("sample size");
  }
  return p;
}

std::vector<uint8_t> colour_map(const Tiff& tiff, const TiffLayout& l) {
  std::vector<uint8_t> pal;
  if (l.kind != TiffKind::kPalette) return pal;
  uint16_t *r = nullptr, *g = nullptr, *b = nullptr;
  if (!TIFFGetField(tiff.get(), TIFFTAG_COLORMAP, &r, &g, &b) || !r || !g || !b) tiff.error("palette image without a colour map");
  const size_t n = size_t(1) << l.bits;
  pal.resize(n * 3);
  for (size_t i = 0; i < n; ++i) pal[3 * i] = r[i] >> 8, pal[3 * i + 1] = g[i] >> 8, pal[3 * i + 2] = b[i] >> 8;
  return pal;
}

void read_striped(const Tiff& tiff, const Page& p, const uint8_t* pal, const Placer& out) {
  std::vector<uint8_t> row(p.buffer_bytes);
  const int planes = p.layout.planar ? p.layout.samples : 1;
  for (int s = 0; s < planes; ++s) {
    if (!tiff_plane_used(p.layout, s)) continue;
    for (uint32_t y = 0; y < p.tags.height; ++y) {
      if (TIFFReadScanline(tiff.get(), row.data(), y, uint16_t(s)) < 0) tiff.error("image data");
      for (uint32_t x = 0; x < p.tags.width; ++x) tiff_pixel(p.layout, row.data(), int(x), s, pal, out.at(int(x), int(y)));
    }
  }
}

void read_tiled(const Tiff& tiff, const Page& p, const uint8_t* pal, const Placer& out) {
  TIFF* t = tiff.get();
  uint32_t tw = 0, th = 0;
  TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw);
  TIFFGetField(t, TIFFTAG_TILELENGTH, &th);
  const uint64_t row_bytes = TIFFTileRowSize64(t);
  if (tw == 0 || th == 0 || row_bytes == 0 || row_bytes * th > p.buffer_bytes) tiff.error("tile size");
  std::vector<uint8_t> tile(p.buffer_bytes);
  const int planes = p.layout.planar ? p.layout.samples : 1;
  const uint32_t W = p.tags.width, H = p.tags.height;
  for (int s = 0; s < planes; ++s) {
    if (!tiff_plane_used(p.layout, s)) continue;
    for (uint32_t ty = 0; ty < H; ty += th)
      for (uint32_t tx = 0; tx < W; tx += tw) {
        if (TIFFReadEncodedTile(t, TIFFComputeTile(t, tx, ty, 0, uint16_t(s)), tile.data(), tmsize_t(tile.size())) < 0)
          tiff.error("image data");
        for (uint32_t y = 0; y < th && ty + y < H; ++y)
          for (uint32_t x = 0; x < tw && tx + x < W; ++x)
            tiff_pixel(p.layout, tile.data() + row_bytes * y, int(x), s, pal, out.at(int(tx + x), int(ty + y)));
      }
  }
}

// libtiff's RGBA interface, a strip at a time, as Pillow's ReadStrip reads YCbCr (TOPLEFT requested).
void read_rgba(const Tiff& tiff, const Page& p, const Placer& out) {
  TIFF* t = tiff.get();
  char emsg[1024] = "";
  TIFFRGBAImage img;
  if (!TIFFRGBAImageOK(t, emsg) || !TIFFRGBAImageBegin(&img, t, 0, emsg))
    fail("unsupported TIFF layout (", printable(emsg), ")");
  struct End {
    TIFFRGBAImage& i;
    ~End() { TIFFRGBAImageEnd(&i); }
  } end{img};
  uint32_t rps = 0;
  TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &rps);
  const uint32_t W = p.tags.width, H = p.tags.height, step = std::min(std::max<uint32_t>(rps, 1), H);
  std::vector<uint32_t> strip(size_t(W) * step);
  img.req_orientation = ORIENTATION_TOPLEFT;
  for (uint32_t y0 = 0; y0 < H; y0 += step) {
    const uint32_t n = std::min(step, H - y0);
    img.row_offset = int(y0);
    img.col_offset = 0;
    if (!TIFFRGBAImageGet(&img, strip.data(), W, n)) tiff.error("image data");
    for (uint32_t y = 0; y < n; ++y)
      for (uint32_t x = 0; x < W; ++x) {
        const uint32_t v = strip[size_t(y) * W + x];
        uint8_t* d = out.at(int(x), int(y0 + y));
        d[0] = uint8_t(TIFFGetR(v)), d[1] = uint8_t(TIFFGetG(v)), d[2] = uint8_t(TIFFGetB(v));
      }
  }
}

}  // namespace

ImageInfo probe_tiff(std::span<const uint8_t> b, uint64_t max_pixels) {
  const Tiff tiff(b, decode_budget(max_pixels));
  const Page p = read_page(tiff);
  check_pixels(p.tags.width, p.tags.height, max_pixels);
  ImageInfo info;
  const bool swap = p.orientation >= 5;
  info.width = static_cast<int>(swap ? p.tags.height : p.tags.width);
  info.height = static_cast<int>(swap ? p.tags.width : p.tags.height);
  info.buffer_bytes = p.buffer_bytes;
  return info;
}

void decode_tiff(std::span<const uint8_t> b, uint64_t max_pixels, ImageU8& out) {
  const Tiff tiff(b, decode_budget(max_pixels));
  const Page p = read_page(tiff);
  check_pixels(p.tags.width, p.tags.height, max_pixels);
  const int W = int(p.tags.width), H = int(p.tags.height);
  const bool swap = p.orientation >= 5;
  out.reset(swap ? H : W, swap ? W : H);
  // A planar image writes its channels plane by plane: start from black where a plane is missing.
  if (p.layout.planar) std::memset(out.pixels.data(), 0, out.stride() * size_t(out.height));
  const Placer place{out.pixels.data(), out.stride(), W, H, p.orientation};
  const std::vector<uint8_t> pal = colour_map(tiff, p.layout);
  if (p.layout.kind == TiffKind::kRgbaInterface)
    read_rgba(tiff, p, place);
  else if (TIFFIsTiled(tiff.get()))
    read_tiled(tiff, p, pal.data(), place);
  else
    read_striped(tiff, p, pal.data(), place);
}

}  // namespace bt::media::detail
