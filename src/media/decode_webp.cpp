// WebP (libwebp's demuxer and decoder), as Pillow 9.4 opens it: Pillow reads every WebP through WebPAnimDecoder,
// whose first frame is the frame decoded onto a canvas of transparent black (anim_decode.c: a key frame is never
// blended), in straight (not premultiplied) RGBA; convert("RGB") then drops alpha. So: the canvas is zero, the
// first frame's rectangle is its RGB, decoded here straight into the output (MODE_RGB gives the RGBA decode's
// colour channels) with no canvas of our own.
#include <webp/decode.h>
#include <webp/demux.h>

#include <cstring>

#include "common/error.h"
#include "media/decoders.h"

namespace bt::media::detail {
namespace {

struct Demuxer {
  WebPDemuxer* d = nullptr;
  explicit Demuxer(std::span<const uint8_t> b) {
    WebPData data{b.data(), b.size()};
    d = WebPDemux(&data);  // NULL on a malformed or incomplete file (WebPAnimDecoderNew fails on it too)
    if (!d) fail("corrupt or truncated WebP (the RIFF container does not parse)");
  }
  ~Demuxer() { WebPDemuxDelete(d); }
  Demuxer(const Demuxer&) = delete;
  Demuxer& operator=(const Demuxer&) = delete;
};

struct Frame {
  int x = 0, y = 0, w = 0, h = 0;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

Frame first_frame(const Demuxer& dm) {
  WebPIterator it;
  if (!WebPDemuxGetFrame(dm.d, 1, &it)) fail("WebP has no frame");
  Frame f{it.x_offset, it.y_offset, it.width, it.height, it.fragment.bytes, it.fragment.size};
  WebPDemuxReleaseIterator(&it);
  return f;
}

const char* status_text(VP8StatusCode s) {
  switch (s) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data";
    default: return "error";
  }
}

}  // namespace

ImageInfo probe_webp(std::span<const uint8_t> b, uint64_t max_pixels) {
  const Demuxer dm(b);
  ImageInfo info;
  const uint64_t w = WebPDemuxGetI(dm.d, WEBP_FF_CANVAS_WIDTH), h = WebPDemuxGetI(dm.d, WEBP_FF_CANVAS_HEIGHT);
  check_pixels(w, h, max_pixels);
  info.width = static_cast<int>(w);
  info.height = static_cast<int>(h);
  const Frame f = first_frame(dm);
  WebPBitstreamFeatures feat;
  if (WebPGetFeatures(f.data, f.size, &feat) != VP8_STATUS_OK) fail("corrupt WebP (bad frame header)");
  // A lossless frame is decoded into an ARGB buffer of its own (4 bytes a pixel); a lossy one's alpha plane is 1.
  info.buffer_bytes = uint64_t(f.w) * uint64_t(f.h) * (feat.format == 2 ? 4 : feat.has_alpha ? 1 : 0);
  return info;
}

void decode_webp(std::span<const uint8_t> b, ImageU8& out) {
  const Demuxer dm(b);
  const int W = static_cast<int>(WebPDemuxGetI(dm.d, WEBP_FF_CANVAS_WIDTH));
  const int H = static_cast<int>(WebPDemuxGetI(dm.d, WEBP_FF_CANVAS_HEIGHT));
  const Frame f = first_frame(dm);
  // The demuxer keeps every frame inside the canvas; checked again since the output is written through it.
  if (f.x < 0 || f.y < 0 || f.w < 1 || f.h < 1 || f.x + f.w > W || f.y + f.h > H) fail("corrupt WebP (frame outside canvas)");
  out.reset(W, H);
  if (f.w != W || f.h != H) std::memset(out.pixels.data(), 0, out.stride() * size_t(H));
  WebPDecoderConfig cfg;
  if (!WebPInitDecoderConfig(&cfg)) fail("cannot initialise libwebp");
  cfg.output.colorspace = MODE_RGB;
  cfg.output.is_external_memory = 1;
  cfg.output.u.RGBA.rgba = out.row(f.y) + size_t(f.x) * 3;
  cfg.output.u.RGBA.stride = static_cast<int>(out.stride());
  cfg.output.u.RGBA.size = out.stride() * size_t(f.h - 1) + size_t(f.w) * 3;
  const VP8StatusCode st = WebPDecode(f.data, f.size, &cfg);
  WebPFreeDecBuffer(&cfg.output);  // external memory: frees nothing of ours
  if (st == VP8_STATUS_NOT_ENOUGH_DATA) fail("truncated WebP (not enough data)");
  if (st != VP8_STATUS_OK) fail("corrupt WebP (", status_text(st), ")");
  if (cfg.output.width != f.w || cfg.output.height != f.h) fail("corrupt WebP (frame size differs from its header)");
}

}  // namespace bt::media::detail
