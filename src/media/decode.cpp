#include "media/decode.h"

#include <spng.h>
#include <turbojpeg.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/machine_memory.h"
#include "media/decoders.h"
#include "media/jpeg_frame.h"

namespace bt::media {

namespace detail {

void check_pixels(uint64_t w, uint64_t h, uint64_t max_pixels) {
  if (w == 0 || h == 0) fail("image has an empty size ", w, "x", h);
  // Each side below 2^32, so the product cannot wrap.
  if (w > max_pixels || h > max_pixels || w * h > max_pixels)
    fail("image ", w, "x", h, " exceeds --max_image_pixels ", max_pixels, " (decompression bomb?)");
}

}  // namespace detail

namespace {

using detail::check_pixels;

constexpr uint8_t kPngSig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

// One TurboJPEG decompressor per thread: creating one costs more than decoding a small image.
struct TjHandle {
  tjhandle h = nullptr;
  TjHandle() : h(tjInitDecompress()) {}
  ~TjHandle() {
    if (h) tjDestroy(h);
  }
};

TjHandle& tj_slot() {
  thread_local TjHandle handle;
  return handle;
}

tjhandle tj() {
  TjHandle& t = tj_slot();
  if (!t.h) t.h = tjInitDecompress();
  if (!t.h) fail("cannot initialise TurboJPEG");
  return t.h;
}

// A failed call can leave the decompressor mid-stream ("SOS before SOF" on the next file): start afresh.
[[noreturn]] void tj_fail(const std::string& msg) {
  TjHandle& t = tj_slot();
  if (t.h) tjDestroy(t.h);
  t.h = nullptr;
  throw Error(msg);
}

struct JpegHeader {
  int width, height, subsamp, colorspace;
  bool warned;  // libjpeg warned while reading the header (e.g. extraneous bytes before a marker)
};

bool is_truncation_warning(const char* msg) {
  return std::strstr(msg, "Premature end of JPEG file") || std::strstr(msg, "premature end of data segment");
}

JpegHeader jpeg_header(std::span<const uint8_t> b) {
  JpegHeader hd{};
  if (tjDecompressHeader3(tj(), b.data(), b.size(), &hd.width, &hd.height, &hd.subsamp, &hd.colorspace) != 0) {
    // A warning (e.g. "Corrupt JPEG data: 4 extraneous bytes before marker 0xdb") still filled in the header, and
    // libjpeg decodes such a file as Pillow does; only a cut-short file or an error refuses it.
    const char* msg = tjGetErrorStr2(tj());
    if (tjGetErrorCode(tj()) != TJERR_WARNING || is_truncation_warning(msg) || hd.width < 1 || hd.height < 1)
      tj_fail(str("corrupt JPEG header (", msg, ")"));
    hd.warned = true;
  }
  return hd;
}

// Pillow reads Adobe CMYK JPEGs inverted ("CMYK;I") and converts with cmyk2rgb (Convert.c).
inline uint8_t muldiv255(int a, int b) {
  int t = a * b + 128;
  return static_cast<uint8_t>(((t >> 8) + t) >> 8);
}

void inverted_cmyk_to_rgb(const uint8_t* cmyk, size_t n, uint8_t* rgb) {
  for (size_t i = 0; i < n; ++i) {
    const int c = 255 - cmyk[4 * i], m = 255 - cmyk[4 * i + 1], y = 255 - cmyk[4 * i + 2];
    const int nk = cmyk[4 * i + 3];  // 255 - inverted k
    rgb[3 * i] = static_cast<uint8_t>(nk - muldiv255(c, nk));
    rgb[3 * i + 1] = static_cast<uint8_t>(nk - muldiv255(m, nk));
    rgb[3 * i + 2] = static_cast<uint8_t>(nk - muldiv255(y, nk));
  }
}

void decode_jpeg(std::span<const uint8_t> b, uint64_t max_pixels, ImageU8& out, int scale_num) {
  JpegHeader hd = jpeg_header(b);
  // TurboJPEG reports an image's first warning only: decode a copy without the header's extraneous bytes, so that
  // a truncation further on is not hidden behind them.
  std::vector<uint8_t> cleaned;
  if (hd.warned) cleaned = without_extraneous_header_bytes(b);
  if (!cleaned.empty()) b = cleaned;
  check_pixels(hd.width, hd.height, max_pixels);
  if (scale_num < 1 || scale_num > 8) fail("bad JPEG scale ", scale_num, "/8");
  const int w = jpeg_scaled(hd.width, scale_num), h = jpeg_scaled(hd.height, scale_num);
  out.reset(w, h);
  // ACCURATEDCT + fancy upsampling are libjpeg's defaults, which Pillow uses; LIMITSCANS refuses
  // progressive files with absurd scan counts (a CPU-time bomb).
  const int flags = TJFLAG_ACCURATEDCT | TJFLAG_LIMITSCANS;
  const bool cmyk = hd.colorspace == TJCS_CMYK || hd.colorspace == TJCS_YCCK;
  int rc;
  if (cmyk) {
    AlignedBuffer<uint8_t> tmp(static_cast<size_t>(w) * h * 4);  // CMYK JPEGs are rare: not kept between images
    rc = tjDecompress2(tj(), b.data(), b.size(), tmp.data(), w, w * 4, h, TJPF_CMYK, flags);
    if (rc == 0 || tjGetErrorCode(tj()) == TJERR_WARNING) inverted_cmyk_to_rgb(tmp.data(), static_cast<size_t>(w) * h, out.pixels.data());
  } else {
    rc = tjDecompress2(tj(), b.data(), b.size(), out.pixels.data(), w, w * 3, h, TJPF_RGB, flags);
  }
  if (rc != 0) {
    const char* msg = tjGetErrorStr2(tj());
    if (tjGetErrorCode(tj()) == TJERR_FATAL) tj_fail(str("corrupt JPEG (", msg, ")"));
    if (is_truncation_warning(msg)) tj_fail(str("truncated JPEG (", msg, ")"));
    // Other warnings: the image decoded; keep it, as Pillow does.
  }
  out.decoded_with_warnings = hd.warned || rc != 0;
}

struct SpngCtx {
  spng_ctx* ctx = spng_ctx_new(0);
  ~SpngCtx() {
    if (ctx) spng_ctx_free(ctx);
  }
};

void check_spng(int rc, const char* what) {
  if (rc == SPNG_EOF || rc == SPNG_IO_EOF) fail("truncated PNG (", what, ": ", spng_strerror(rc), ")");
  if (rc != 0) fail("corrupt PNG (", what, ": ", spng_strerror(rc), ")");
}

void open_png(SpngCtx& c, std::span<const uint8_t> b, uint64_t max_pixels, spng_ihdr& ihdr) {
  if (!c.ctx) fail("cannot initialise libspng");
  const uint32_t lim = max_pixels > 0x7fffffffu ? 0x7fffffffu : static_cast<uint32_t>(max_pixels);
  spng_set_image_limits(c.ctx, lim, lim);
  // Ancillary chunks (text, ICC, ...) are skipped by the RGB8 path; cap what libspng buffers for them.
  spng_set_chunk_limits(c.ctx, 16u << 20, 64u << 20);
  check_spng(spng_set_png_buffer(c.ctx, b.data(), b.size()), "buffer");
  check_spng(spng_get_ihdr(c.ctx, &ihdr), "header");
  check_pixels(ihdr.width, ihdr.height, max_pixels);
}

bool is_gray16(const spng_ihdr& ihdr) { return ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE && ihdr.bit_depth == 16; }

// Pillow opens a 16-bit grey PNG as mode "I" and convert("RGB") clips each value to 255 (not a rescale).
void gray16_to_rgb8(const uint16_t* g, size_t n, uint8_t* o) {
  for (size_t i = 0; i < n; ++i) {
    const uint8_t v = g[i] > 255 ? 255 : static_cast<uint8_t>(g[i]);
    o[3 * i] = o[3 * i + 1] = o[3 * i + 2] = v;
  }
}

// The decoded size in `fmt` must be what the header promises (`bytes_per_pixel` per pixel).
void check_png_size(SpngCtx& c, int fmt, size_t n, size_t bytes_per_pixel) {
  size_t len = 0;
  check_spng(spng_decoded_image_size(c.ctx, fmt, &len), "size");
  if (len != n * bytes_per_pixel) fail("corrupt PNG (unexpected decoded size)");
}

void decode_png(std::span<const uint8_t> b, uint64_t max_pixels, ImageU8& out) {
  SpngCtx c;
  spng_ihdr ihdr{};
  open_png(c, b, max_pixels, ihdr);
  const int w = static_cast<int>(ihdr.width), h = static_cast<int>(ihdr.height);
  out.reset(w, h);
  const size_t n = static_cast<size_t>(w) * h;
  if (is_gray16(ihdr)) {
    check_png_size(c, SPNG_FMT_PNG, n, 2);
    AlignedBuffer<uint16_t> tmp(n);  // not kept: the CPU transform decodes non-interlaced PNGs row by row
    check_spng(spng_decode_image(c.ctx, tmp.data(), n * 2, SPNG_FMT_PNG, 0), "image data");
    gray16_to_rgb8(tmp.data(), n, out.pixels.data());
    return;
  }
  check_png_size(c, SPNG_FMT_RGB8, n, 3);
  check_spng(spng_decode_image(c.ctx, out.pixels.data(), n * 3, SPNG_FMT_RGB8, 0), "image data");
}

bool starts_with(std::span<const uint8_t> b, const char* magic, size_t n, size_t at = 0) {
  return b.size() >= at + n && std::memcmp(b.data() + at, magic, n) == 0;
}

}  // namespace

namespace detail {

void cmyk_to_rgb(const uint8_t* cmyk, size_t n, uint8_t* rgb) {
  for (size_t i = 0; i < n; ++i) {
    const int nk = 255 - cmyk[4 * i + 3];
    for (int c = 0; c < 3; ++c) rgb[3 * i + c] = static_cast<uint8_t>(nk - muldiv255(cmyk[4 * i + c], nk));
  }
}

}  // namespace detail

// The signatures Pillow's plugins accept (their _accept()), in the order Pillow tries them for these formats.
ImageFormat sniff_format(std::span<const uint8_t> b) {
  if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return ImageFormat::kJpeg;
  if (b.size() >= 8 && std::memcmp(b.data(), kPngSig, 8) == 0) return ImageFormat::kPng;
  if (starts_with(b, "RIFF", 4) && starts_with(b, "WEBP", 4, 8)) return ImageFormat::kWebp;
  if (starts_with(b, "GIF87a", 6) || starts_with(b, "GIF89a", 6)) return ImageFormat::kGif;
  if (starts_with(b, "BM", 2)) return ImageFormat::kBmp;
  for (const char* m : {"MM\x00\x2A", "II\x2A\x00", "MM\x2A\x00", "II\x00\x2A", "MM\x00\x2B", "II\x2B\x00"})
    if (starts_with(b, m, 4)) return ImageFormat::kTiff;
  return ImageFormat::kUnknown;
}

const char* format_name(ImageFormat f) {
  switch (f) {
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kWebp: return "WebP";
    case ImageFormat::kGif: return "GIF";
    case ImageFormat::kBmp: return "BMP";
    case ImageFormat::kTiff: return "TIFF";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

static ImageFormat require_format(std::span<const uint8_t> b) {
  if (b.empty()) fail("empty file (0 bytes)");
  const ImageFormat f = sniff_format(b);
  // The bytes themselves are never quoted: a caption row may name any file, and its contents are not ours
  // to print.
  if (f == ImageFormat::kUnknown) fail("not an image file: not JPEG, PNG, WebP, GIF, BMP or TIFF (unknown signature)");
  return f;
}

static ImageInfo probe_other(ImageFormat f, std::span<const uint8_t> b, uint64_t max_pixels) {
  switch (f) {
    case ImageFormat::kWebp: return detail::probe_webp(b, max_pixels);
    case ImageFormat::kGif: return detail::probe_gif(b, max_pixels);
    case ImageFormat::kBmp: return detail::probe_bmp(b, max_pixels);
    default: return detail::probe_tiff(b, max_pixels);
  }
}

ImageInfo probe_image(std::span<const uint8_t> b, uint64_t max_pixels) {
  ImageInfo info;
  info.format = require_format(b);
  if (info.format != ImageFormat::kJpeg && info.format != ImageFormat::kPng) {
    const ImageFormat f = info.format;
    info = probe_other(f, b, max_pixels);
    info.format = f;
  } else if (info.format == ImageFormat::kJpeg) {
    const JpegHeader hd = jpeg_header(b);
    info.width = hd.width;
    info.height = hd.height;
    if (hd.colorspace == TJCS_CMYK || hd.colorspace == TJCS_YCCK) info.temp_bytes_per_pixel = 4;
    info.coefficient_bytes = jpeg_coefficient_bytes(read_jpeg_frame(b));  // TurboJPEG parsed it: well formed
  } else {
    SpngCtx c;
    spng_ihdr ihdr{};
    open_png(c, b, max_pixels, ihdr);
    info.width = static_cast<int>(ihdr.width);
    info.height = static_cast<int>(ihdr.height);
    info.interlaced = ihdr.interlace_method != 0;
    if (is_gray16(ihdr)) info.temp_bytes_per_pixel = 2;
  }
  check_pixels(info.width, info.height, max_pixels);
  return info;
}

uint64_t decode_bytes(const ImageInfo& info, int scale_num) {
  const int s = info.format == ImageFormat::kJpeg ? scale_num : 8;
  const uint64_t pixels = uint64_t(jpeg_scaled(info.width, s)) * uint64_t(jpeg_scaled(info.height, s));
  return pixels * uint64_t(3 + info.temp_bytes_per_pixel) + info.coefficient_bytes + info.buffer_bytes;
}

uint64_t decode_budget(uint64_t max_pixels) {
  constexpr uint64_t kFloor = uint64_t(64) << 20;
  return max_pixels > UINT64_MAX / 4 ? UINT64_MAX / 2 : std::max(kFloor, 2 * max_pixels);
}

void check_decode_budget(const ImageInfo& info, uint64_t bytes, uint64_t max_pixels) {
  const uint64_t budget = decode_budget(max_pixels);
  if (bytes <= budget) return;
  const char* kind = info.format == ImageFormat::kPng  ? (info.interlaced ? "interlaced PNG" : "PNG")
                     : info.format != ImageFormat::kJpeg ? format_name(info.format)
                     : info.coefficient_bytes > 0     ? "progressive or multi-scan JPEG"
                                                      : "JPEG";
  fail("image ", info.width, "x", info.height, " (", kind, ") needs ", bytes_str(bytes),
       " to decode, more than the ", bytes_str(budget), " one image may take (2 bytes per --max_image_pixels pixel, ",
       max_pixels, "): raise --max_image_pixels to allow it, or re-encode the image smaller",
       info.format == ImageFormat::kJpeg && info.coefficient_bytes == 0 ? " (or keep --jpeg_dct_scaling on)" : "");
}

bool png_streams(const ImageInfo& info) { return info.format == ImageFormat::kPng && !info.interlaced; }

int choose_jpeg_scale(int width, int height, double region_w, double region_h, int size) {
  int n = 8;
  // TurboJPEG offers every k/8 for k = 1..8 below full size (tjGetScalingFactors lists them).
  for (int k = 7; k >= 1; --k) {
    const double sx = static_cast<double>(jpeg_scaled(width, k)) / width;
    const double sy = static_cast<double>(jpeg_scaled(height, k)) / height;
    if (region_w * sx >= size && region_h * sy >= size)
      n = k;
    else
      break;
  }
  return n;
}

void decode_rgb8(std::span<const uint8_t> b, const ImageInfo& info, uint64_t max_pixels, ImageU8& out,
                 int jpeg_scale_num) {
  check_decode_budget(info, decode_bytes(info, jpeg_scale_num), max_pixels);
  switch (info.format) {
    case ImageFormat::kJpeg: return decode_jpeg(b, max_pixels, out, jpeg_scale_num);
    case ImageFormat::kPng: return decode_png(b, max_pixels, out);
    case ImageFormat::kWebp: return detail::decode_webp(b, out);
    case ImageFormat::kGif: return detail::decode_gif(b, out);
    case ImageFormat::kBmp: return detail::decode_bmp(b, out);
    case ImageFormat::kTiff: return detail::decode_tiff(b, max_pixels, out);
    case ImageFormat::kUnknown: break;
  }
  fail("not an image file (unknown format)");
}

void decode_rgb8(std::span<const uint8_t> b, uint64_t max_pixels, ImageU8& out, int jpeg_scale_num) {
  decode_rgb8(b, probe_image(b, max_pixels), max_pixels, out, jpeg_scale_num);
}

struct PngRowDecoder::Impl {
  SpngCtx c;
  spng_ihdr ihdr{};
  AlignedBuffer<uint8_t>* block = nullptr;
  AlignedBuffer<uint16_t> gray16;  // one row of a 16-bit grey PNG before the clip to RGB8
  int next = 0;                    // rows decoded so far
};

PngRowDecoder::PngRowDecoder(std::span<const uint8_t> png, uint64_t max_pixels, AlignedBuffer<uint8_t>& block)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.block = &block;
  open_png(d.c, png, max_pixels, d.ihdr);
  if (d.ihdr.interlace_method != 0) fail("interlaced PNG cannot be decoded row by row");
  const size_t w = d.ihdr.width;
  const int fmt = is_gray16(d.ihdr) ? SPNG_FMT_PNG : SPNG_FMT_RGB8;
  check_png_size(d.c, fmt, w * d.ihdr.height, is_gray16(d.ihdr) ? 2 : 3);
  if (is_gray16(d.ihdr)) d.gray16.resize(w);
  check_spng(spng_decode_image(d.c.ctx, nullptr, 0, fmt, SPNG_DECODE_PROGRESSIVE), "image data");
}

PngRowDecoder::~PngRowDecoder() = default;
int PngRowDecoder::width() const { return static_cast<int>(impl_->ihdr.width); }
int PngRowDecoder::height() const { return static_cast<int>(impl_->ihdr.height); }

const uint8_t* PngRowDecoder::rows(int y, int n, size_t* stride) {
  Impl& d = *impl_;
  const size_t row = size_t(d.ihdr.width) * 3;
  if (y < d.next || n < 1 || y + n > height()) fail("PNG rows ", y, "..", y + n, " requested out of order");
  d.block->resize(row * size_t(n) + 64);
  for (; d.next < y + n; ++d.next) {
    // Rows before y are decoded into the first slot and overwritten: a PNG's rows only come in order.
    uint8_t* dst = d.block->data() + row * size_t(std::max(0, d.next - y));
    int rc;
    if (d.gray16.empty()) {
      rc = spng_decode_row(d.c.ctx, dst, row);
    } else {
      rc = spng_decode_row(d.c.ctx, d.gray16.data(), d.gray16.size() * 2);
      if (rc == 0 || rc == SPNG_EOI) gray16_to_rgb8(d.gray16.data(), d.gray16.size(), dst);
    }
    // SPNG_EOI comes with the last row; before it, the data ended early.
    if (rc == SPNG_EOI && d.next + 1 != height()) rc = SPNG_EOF;
    if (rc != 0 && rc != SPNG_EOI) check_spng(rc, "image data");
  }
  *stride = row;
  return d.block->data();
}

}  // namespace bt::media
