// A JPEG's coding parameters from its marker segments, read without decoding: which SOF process (baseline,
// progressive, ...), sample precision, size, components and their sampling factors, the Adobe APP14 colour
// transform, how many components the first scan holds, and whether the file ends with EOI. The loader's encoded mode (loader/decode_only.h) uses it to
// decide which JPEGs a GPU decoder may take; libjpeg-turbo's header API does not report the SOF process.
//
// Contract: read_jpeg_frame() walks the segments from SOI up to the first SOFn (bounds-checked, never reads past
// the span) and throws bt::Error (reason only) when the bytes are not a JPEG or a segment is malformed; then on to
// the first SOS for scan_components (left 0 when a segment after the SOF is malformed or no SOS follows: that is
// the decoder's error to report). Any bytes are safe input (fuzz/media/fuzz_decode.cpp). The decode budget
// (media/decode.h) reads it: a progressive frame, or a first scan with fewer components than the frame, makes
// libjpeg keep the whole image's coefficients.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace bt::media {

struct JpegComponent {
  int id = 0;
  int h = 0, v = 0;  // sampling factors (1..4)
};

struct JpegFrame {
  int sof = -1;        // SOFn marker minus 0xC0: 0 baseline, 1 extended sequential, 2 progressive, 3 lossless, 9+ arithmetic
  int precision = 0;   // bits per sample (8 or 12)
  int width = 0, height = 0;
  int num_components = 0;
  JpegComponent components[4];
  int adobe_transform = -1;  // APP14 "Adobe" transform flag (0 none/RGB/CMYK, 1 YCbCr, 2 YCCK), -1 if absent
  int scan_components = 0;   // components in the first scan (SOS); 0 when not reached
  bool ends_with_eoi = false;  // FF D9 at the end (trailing zero padding allowed): the file is not cut short
  bool extraneous = false;     // bytes other than fill between marker segments up to the first SOS (libjpeg
                               // warns "Corrupt JPEG data: N extraneous bytes before marker 0x..")
};

JpegFrame read_jpeg_frame(std::span<const uint8_t> jpeg);

// Bytes of the whole-image coefficient buffer libjpeg allocates for `f` (jdcoefct.c: per component, its blocks
// rounded up to its sampling factors, 128 bytes each), or 0 when it decodes scan by scan (one sequential scan of
// every component).
uint64_t jpeg_coefficient_bytes(const JpegFrame& f);

// The JPEG with the extraneous bytes between its marker segments before the first scan dropped (libjpeg skips them
// with a warning, "Corrupt JPEG data: N extraneous bytes before marker 0x.."), the rest byte for byte. TurboJPEG
// keeps only an image's first warning, so decoding this copy lets a later "Premature end of JPEG file" (a file cut
// short, which stays an error) be seen. Empty when there was nothing to drop or a segment is malformed.
std::vector<uint8_t> without_extraneous_header_bytes(std::span<const uint8_t> jpeg);

}  // namespace bt::media
