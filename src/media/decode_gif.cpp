// GIF (giflib, read record by record up to the first image only: never DGifSlurp, which would read every frame), as
// Pillow 9.4's GifImagePlugin opens it and convert("RGB") sees the first frame:
//  - size: the logical screen, grown to hold the first frame when it reaches past it;
//  - palette: the frame's local colour table, else the global one; an index past the table reads grey (i, i, i),
//    as does every index of a file without a table (Pillow's mode L);
//  - the canvas outside the frame: the colour of the transparent index of the frame's graphic control extension
//    (the last one before the frame), else of index 0. Transparency itself is dropped, as convert("RGB") drops it;
//  - an interlaced frame's rows come in 4 passes (rows 0, 8, ...; 4, 12, ...; 2, 6, ...; 1, 3, ...).
// A frame whose data is cut short is an error (Pillow: "image file is truncated"), as is one whose LZW data ends
// before its last pixel (giflib refuses it where Pillow leaves the rest as the canvas: the one difference).
#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "media/decoders.h"

namespace bt::media::detail {
namespace {

struct Reader {
  std::span<const uint8_t> b;
  size_t pos = 0;
};

int read_mem(GifFileType* g, GifByteType* dst, int n) {
  Reader& r = *static_cast<Reader*>(g->UserData);
  const size_t k = std::min<size_t>(n < 0 ? 0 : size_t(n), r.b.size() - r.pos);
  std::memcpy(dst, r.b.data() + r.pos, k);
  r.pos += k;
  return static_cast<int>(k);
}

[[noreturn]] void gif_fail(int code) {
  if (code == D_GIF_ERR_READ_FAILED) fail("truncated GIF (the data ends early)");
  const char* why = GifErrorString(code);
  fail("corrupt GIF (", why ? why : "unknown error", ")");
}

// giflib's file, closed also when the walk below throws half way through the constructor.
struct GifHandle {
  GifFileType* g = nullptr;
  GifHandle(Reader* r) {
    int err = 0;
    g = DGifOpen(r, read_mem, &err);
    if (!g) gif_fail(err);
  }
  ~GifHandle() {
    int err = 0;
    DGifCloseFile(g, &err);
  }
  GifHandle(const GifHandle&) = delete;
  GifHandle& operator=(const GifHandle&) = delete;
};

// The file opened and walked to its first image descriptor: what Pillow's _open() and _seek(0) read.
struct Gif {
  Reader reader;
  GifHandle handle;
  GifFileType* g;
  int transparent = -1;  // the first frame's transparent index, -1 for none
  int width = 0, height = 0;

  explicit Gif(std::span<const uint8_t> b) : reader{b}, handle(&reader), g(handle.g) {
    to_first_image();
    width = std::max<int>(g->SWidth, g->Image.Left + g->Image.Width);
    height = std::max<int>(g->SHeight, g->Image.Top + g->Image.Height);
  }

  void check(int rc) const {
    if (rc != GIF_OK) gif_fail(g->Error);
  }

  void to_first_image() {
    for (;;) {
      GifRecordType type;
      check(DGifGetRecordType(g, &type));
      if (type == TERMINATE_RECORD_TYPE) fail("GIF has no image");
      if (type == IMAGE_DESC_RECORD_TYPE) {
        check(DGifGetImageDesc(g));
        return;
      }
      if (type != EXTENSION_RECORD_TYPE) continue;
      int code = 0;
      GifByteType* ext = nullptr;
      check(DGifGetExtension(g, &code, &ext));
      // Graphic control: [4, flags, delay lo, delay hi, transparent index]; Pillow keeps the last one's.
      if (code == GRAPHICS_EXT_FUNC_CODE && ext && ext[0] >= 4) transparent = (ext[1] & 1) ? ext[4] : -1;
      while (ext) check(DGifGetExtensionNext(g, &ext));
    }
  }
};

// Row y of pass order -> row of the frame (GIF's 4-pass interlace).
int interlaced_row(int i, int h) {
  static const int start[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
  for (int p = 0; p < 4; ++p) {
    const int n = h > start[p] ? (h - start[p] + step[p] - 1) / step[p] : 0;
    if (i < n) return start[p] + i * step[p];
    i -= n;
  }
  return -1;
}

}  // namespace

ImageInfo probe_gif(std::span<const uint8_t> b, uint64_t max_pixels) {
  const Gif gif(b);
  check_pixels(uint64_t(gif.width), uint64_t(gif.height), max_pixels);
  ImageInfo info;
  info.width = gif.width;
  info.height = gif.height;
  return info;
}

void decode_gif(std::span<const uint8_t> b, ImageU8& out) {
  Gif gif(b);
  const GifImageDesc& im = gif.g->Image;
  const ColorMapObject* cmap = im.ColorMap ? im.ColorMap : gif.g->SColorMap;
  uint8_t pal[256 * 3] = {};
  int ncolors = 0;
  if (cmap && cmap->Colors) {
    ncolors = std::clamp(cmap->ColorCount, 0, 256);
    for (int i = 0; i < ncolors; ++i)
      pal[3 * i] = cmap->Colors[i].Red, pal[3 * i + 1] = cmap->Colors[i].Green, pal[3 * i + 2] = cmap->Colors[i].Blue;
  }
  out.reset(gif.width, gif.height);
  uint8_t fill[3];
  palette_rgb(pal, ncolors, gif.transparent >= 0 ? gif.transparent : 0, fill);
  const size_t n = size_t(gif.width) * size_t(gif.height);
  uint8_t* px = out.pixels.data();
  for (size_t i = 0; i < n; ++i) std::memcpy(px + 3 * i, fill, 3);
  std::vector<GifPixelType> line(size_t(std::max(im.Width, 1)));
  for (int i = 0; im.Width > 0 && i < im.Height; ++i) {
    gif.check(DGifGetLine(gif.g, line.data(), im.Width));
    const int y = im.Top + (im.Interlace ? interlaced_row(i, im.Height) : i);
    uint8_t* dst = out.row(y) + size_t(im.Left) * 3;
    for (int x = 0; x < im.Width; ++x) palette_rgb(pal, ncolors, line[size_t(x)], dst + 3 * x);
  }
}

}  // namespace bt::media::detail
