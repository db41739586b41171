#include "media/decode.h"

#include <spng.h>
#include <turbojpeg.h>

#include <cstring>
#include <memory>
#include <string>

#include "common/error.h"

namespace bt::media {
namespace {

constexpr uint8_t kPngSig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

void check_pixels(int w, int h, uint64_t max_pixels) {
  if (w <= 0 || h <= 0) fail("image has an empty size ", w, "x", h);
  if (static_cast<uint64_t>(w) * static_cast<uint64_t>(h) > max_pixels)
    fail("image ", w, "x", h, " exceeds --max_image_pixels ", max_pixels, " (decompression bomb?)");
}

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
};

JpegHeader jpeg_header(std::span<const uint8_t> b) {
  JpegHeader hd{};
  if (tjDecompressHeader3(tj(), b.data(), b.size(), &hd.width, &hd.height, &hd.subsamp, &hd.colorspace) != 0)
    tj_fail(str("corrupt JPEG header (", tjGetErrorStr2(tj()), ")"));
  return hd;
}

bool is_truncation_warning(const char* msg) {
  return std::strstr(msg, "Premature end of JPEG file") || std::strstr(msg, "premature end of data segment");
}

// Pillow reads Adobe CMYK JPEGs inverted ("CMYK;I") and converts with cmyk2rgb (Convert.c).
inline uint8_t muldiv255(int a, int b) {
  int t = a * b + 128;
  return static_cast<uint8_t>(((t >> 8) + t) >> 8);
}

void cmyk_to_rgb(const uint8_t* cmyk, size_t n, uint8_t* rgb) {
  for (size_t i = 0; i < n; ++i) {
    const int c = 255 - cmyk[4 * i], m = 255 - cmyk[4 * i + 1], y = 255 - cmyk[4 * i + 2];
    const int nk = cmyk[4 * i + 3];  // 255 - inverted k
    rgb[3 * i] = static_cast<uint8_t>(nk - muldiv255(c, nk));
    rgb[3 * i + 1] = static_cast<uint8_t>(nk - muldiv255(m, nk));
    rgb[3 * i + 2] = static_cast<uint8_t>(nk - muldiv255(y, nk));
  }
}

void decode_jpeg(std::span<const uint8_t> b, uint64_t max_pixels, ImageU8& out, int scale_num) {
  const JpegHeader hd = jpeg_header(b);
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
    thread_local AlignedBuffer<uint8_t> tmp;
    tmp.resize(static_cast<size_t>(w) * h * 4);
    rc = tjDecompress2(tj(), b.data(), b.size(), tmp.data(), w, w * 4, h, TJPF_CMYK, flags);
    if (rc == 0 || tjGetErrorCode(tj()) == TJERR_WARNING) cmyk_to_rgb(tmp.data(), static_cast<size_t>(w) * h, out.pixels.data());
  } else {
    rc = tjDecompress2(tj(), b.data(), b.size(), out.pixels.data(), w, w * 3, h, TJPF_RGB, flags);
  }
  if (rc != 0) {
    const char* msg = tjGetErrorStr2(tj());
    if (tjGetErrorCode(tj()) == TJERR_FATAL) tj_fail(str("corrupt JPEG (", msg, ")"));
    if (is_truncation_warning(msg)) tj_fail(str("truncated JPEG (", msg, ")"));
    // Other warnings: the image decoded; keep it, as Pillow does.
  }
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
  check_pixels(static_cast<int>(ihdr.width), static_cast<int>(ihdr.height), max_pixels);
}

void decode_png(std::span<const uint8_t> b, uint64_t max_pixels, ImageU8& out) {
  SpngCtx c;
  spng_ihdr ihdr{};
  open_png(c, b, max_pixels, ihdr);
  const int w = static_cast<int>(ihdr.width), h = static_cast<int>(ihdr.height);
  out.reset(w, h);
  const size_t n = static_cast<size_t>(w) * h;
  size_t len = 0;
  if (ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE && ihdr.bit_depth == 16) {
    // Pillow opens this as mode "I" and convert("RGB") clips each value to 255 (not a rescale).
    check_spng(spng_decoded_image_size(c.ctx, SPNG_FMT_PNG, &len), "size");
    if (len != n * 2) fail("corrupt PNG (unexpected 16-bit gray size)");
    thread_local AlignedBuffer<uint16_t> tmp;
    tmp.resize(n);
    check_spng(spng_decode_image(c.ctx, tmp.data(), len, SPNG_FMT_PNG, 0), "image data");
    uint8_t* o = out.pixels.data();
    for (size_t i = 0; i < n; ++i) {
      const uint8_t v = tmp[i] > 255 ? 255 : static_cast<uint8_t>(tmp[i]);
      o[3 * i] = o[3 * i + 1] = o[3 * i + 2] = v;
    }
    return;
  }
  check_spng(spng_decoded_image_size(c.ctx, SPNG_FMT_RGB8, &len), "size");
  if (len != n * 3) fail("corrupt PNG (unexpected RGB8 size)");
  check_spng(spng_decode_image(c.ctx, out.pixels.data(), len, SPNG_FMT_RGB8, 0), "image data");
}

}  // namespace

ImageFormat sniff_format(std::span<const uint8_t> b) {
  if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return ImageFormat::kJpeg;
  if (b.size() >= 8 && std::memcmp(b.data(), kPngSig, 8) == 0) return ImageFormat::kPng;
  return ImageFormat::kUnknown;
}

static ImageFormat require_format(std::span<const uint8_t> b) {
  if (b.empty()) fail("empty file (0 bytes)");
  const ImageFormat f = sniff_format(b);
  // The bytes themselves are never quoted: a caption row may name any file, and its contents are not ours
  // to print.
  if (f == ImageFormat::kUnknown) fail("not a JPEG or PNG file (unknown signature)");
  return f;
}

ImageInfo probe_image(std::span<const uint8_t> b, uint64_t max_pixels) {
  ImageInfo info;
  info.format = require_format(b);
  if (info.format == ImageFormat::kJpeg) {
    const JpegHeader hd = jpeg_header(b);
    info.width = hd.width;
    info.height = hd.height;
  } else {
    SpngCtx c;
    spng_ihdr ihdr{};
    open_png(c, b, max_pixels, ihdr);
    info.width = static_cast<int>(ihdr.width);
    info.height = static_cast<int>(ihdr.height);
  }
  check_pixels(info.width, info.height, max_pixels);
  return info;
}

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

void decode_rgb8(std::span<const uint8_t> b, uint64_t max_pixels, ImageU8& out, int jpeg_scale_num) {
  if (require_format(b) == ImageFormat::kJpeg)
    decode_jpeg(b, max_pixels, out, jpeg_scale_num);
  else
    decode_png(b, max_pixels, out);
}

}  // namespace bt::media
