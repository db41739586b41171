// Pillow-exact antialiased resampling of RGB8 images (Image.resize(size, BICUBIC, box) in Pillow 9.x,
// ImagingResampleInner's 8-bit fixed-point path): a horizontal pass into a uint8 intermediate holding only
// the source rows the vertical pass reads, then a vertical pass. Passes Pillow skips (same size, no box)
// are skipped here too, so the result is bit-identical.
//
// Each output pixel depends only on its own coordinates, so computing just a window of the output (the
// center crop, say) gives exactly the pixels a full resize followed by crop() would.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

#include "common/aligned_buffer.h"
#include "media/resample_coeffs.h"

namespace bt::media {

struct Box {  // a region of the source in (fractional) pixels: Pillow's resize `box`
  double x0, y0, x1, y1;
};

struct Window {  // the part of the out_w x out_h result to produce
  int x, y, w, h;
};

struct ResizeScratch {
  AlignedBuffer<uint8_t> cols;  // a block of source rows, transposed (column-major)
  AlignedBuffer<uint8_t> hout;  // horizontal results of a block, column-major
  AlignedBuffer<uint8_t> tmp;   // the intermediate image (needed source rows x window width)
};

// src: w x h RGB8 with row stride `stride` (bytes). Writes win.w x win.h RGB8 pixels to dst (row stride
// dst_stride), mirrored left-right when hflip. Throws bt::Error on inconsistent arguments.
void resize_rgb8(const uint8_t* src, int w, int h, size_t stride, const Box& box, int out_w, int out_h,
                 const Window& win, uint8_t* dst, size_t dst_stride, ResizeScratch& scratch,
                 bool hflip = false, Filter filter = Filter::kBicubic);

// Source rows are resampled horizontally in blocks of this many.
inline constexpr int kResizeRowBlock = 32;

// The same resize of a source read top to bottom (a PNG decoded row by row, media/decode.h PngRowDecoder):
// read(y, n, &stride) returns source rows [y, y + n) (w pixels each, `stride` bytes apart, readable up to 16 bytes
// past the last pixel; n <= kResizeRowBlock), called with increasing y, only for the rows the window needs. Each block of rows is
// resampled horizontally as it arrives, so only the window's intermediate (rows x win.w) is held, never the source.
// Bit-identical to resize_rgb8 on the same pixels.
using RowReader = std::function<const uint8_t*(int y, int n, size_t* stride)>;
void resize_rgb8_rows(const RowReader& read, int w, int h, const Box& box, int out_w, int out_h, const Window& win,
                      uint8_t* dst, size_t dst_stride, ResizeScratch& scratch, bool hflip = false,
                      Filter filter = Filter::kBicubic);

// The bytes a ResizeScratch grows to for a window of win_w columns over `rows` source rows src_w columns wide:
// the intermediate (rows x win_w) and the transposed column blocks.
uint64_t resize_scratch_bytes(int src_w, int rows, int win_w);

// Whole-image convenience: Pillow's im.resize((out_w, out_h), BICUBIC).
inline void resize_rgb8(const uint8_t* src, int w, int h, int out_w, int out_h, uint8_t* dst,
                        ResizeScratch& scratch) {
  resize_rgb8(src, w, h, static_cast<size_t>(w) * 3, Box{0, 0, double(w), double(h)}, out_w, out_h,
              Window{0, 0, out_w, out_h}, dst, static_cast<size_t>(out_w) * 3, scratch);
}

}  // namespace bt::media
