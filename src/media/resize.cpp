#include "media/resize.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "media/simd.h"

namespace bt::media {
namespace {

// Source rows per horizontal block. The block is transposed so that each horizontal tap becomes a
// contiguous run of kBlock * 3 bytes with one weight, the same shape as the vertical pass, which the
// SIMD multiply-accumulate handles at full width.
constexpr int kBlock = kResizeRowBlock;
constexpr size_t kColBytes = kBlock * 3 + 4;  // +4: the transposers' 16-byte moves of 12 bytes spill into it

// Horizontal pass over source rows [y0, y1), output columns [ox, ox + nw) of the coefficient table,
// written as rows of nw * 3 bytes to tmp (row r -> tmp + (r - y0) * nw * 3).
void horizontal_pass(const uint8_t* src, int w, size_t stride, int y0, int y1, const ResampleCoeffs& hc,
                     int ox, int nw, uint8_t* tmp, ResizeScratch& s) {
  const int xlo = hc.bounds[ox].first;
  int xhi = xlo;
  for (int o = ox; o < ox + nw; ++o) xhi = std::max(xhi, hc.bounds[o].first + hc.bounds[o].count);
  const int ncols = xhi - xlo;
  s.cols.resize(static_cast<size_t>(ncols) * kColBytes);
  s.hout.resize(static_cast<size_t>(nw) * kColBytes);
  // Bounds relative to the first transposed column.
  std::vector<ResampleBounds> rel(hc.bounds.begin() + ox, hc.bounds.begin() + ox + nw);
  for (auto& b : rel) b.first -= xlo;
  const size_t tmp_stride = static_cast<size_t>(nw) * 3;
  for (int b0 = y0; b0 < y1; b0 += kBlock) {
    const int nb = std::min(kBlock, y1 - b0);
    uint8_t* cols = s.cols.data();
    const uint8_t* s0 = src + static_cast<size_t>(b0) * stride + static_cast<size_t>(xlo) * 3;
    rows_to_cols_rgb8(s0, stride, nb, ncols, w - xhi, cols, kColBytes);
    horizontal_block_u8(cols, kColBytes, static_cast<size_t>(nb) * 3, rel.data(),
                        &hc.fixed[static_cast<size_t>(ox) * hc.taps], hc.taps, nw, s.hout.data());
    cols_to_rows_rgb8(s.hout.data(), kColBytes, nb, nw, tmp + static_cast<size_t>(b0 - y0) * tmp_stride,
                      tmp_stride);
  }
}

void vertical_pass(const uint8_t* in, size_t in_stride, int row_offset, const ResampleCoeffs& vc, int oy,
                   int nh, size_t nbytes, uint8_t* dst, size_t dst_stride) {
  std::vector<const uint8_t*> rows(static_cast<size_t>(vc.taps));
  for (int y = 0; y < nh; ++y) {
    const ResampleBounds bd = vc.bounds[oy + y];
    for (int k = 0; k < bd.count; ++k) rows[k] = in + static_cast<size_t>(bd.first - row_offset + k) * in_stride;
    mac_rows_u8(rows.data(), &vc.fixed[static_cast<size_t>(oy + y) * vc.taps], bd.count, nbytes,
                dst + static_cast<size_t>(y) * dst_stride);
  }
}

void check_sizes(int w, int h, int out_w, int out_h, const Window& win) {
  if (w <= 0 || h <= 0 || out_w <= 0 || out_h <= 0)
    fail("resize: bad sizes (", w, "x", h, " -> ", out_w, "x", out_h, ")");
  if (win.x < 0 || win.y < 0 || win.w <= 0 || win.h <= 0 || win.x + win.w > out_w || win.y + win.h > out_h)
    fail("resize: window ", win.w, "x", win.h, "+", win.x, "+", win.y, " outside ", out_w, "x", out_h);
}

bool needs_h(int w, const Box& box, int out_w) { return out_w != w || box.x0 != 0 || box.x1 != out_w; }
bool needs_v(int h, const Box& box, int out_h) { return out_h != h || box.y0 != 0 || box.y1 != out_h; }

// The source rows [first, end) a vertical table reads.
struct RowSpan {
  int first, end;
};
RowSpan table_rows(const ResampleCoeffs& vc, int h, int n) {
  int y0 = h, y1 = 0;
  for (int y = 0; y < n; ++y) {
    y0 = std::min(y0, vc.bounds[y].first);
    y1 = std::max(y1, vc.bounds[y].first + vc.bounds[y].count);
  }
  return {y0, y1};
}

void flip_rows(uint8_t* dst, size_t dst_stride, int w, int h) {
  for (int y = 0; y < h; ++y) {
    uint8_t* p = dst + static_cast<size_t>(y) * dst_stride;
    for (int a = 0, b = w - 1; a < b; ++a, --b)
      for (int c = 0; c < 3; ++c) std::swap(p[a * 3 + c], p[b * 3 + c]);
  }
}

}  // namespace

void resize_rgb8(const uint8_t* src, int w, int h, size_t stride, const Box& box, int out_w, int out_h,
                 const Window& win, uint8_t* dst, size_t dst_stride, ResizeScratch& s, bool hflip,
                 Filter filter) {
  check_sizes(w, h, out_w, out_h, win);
  if (stride < static_cast<size_t>(w) * 3) fail("resize: bad stride ", stride, " for width ", w);
  const bool need_h = needs_h(w, box, out_w), need_v = needs_v(h, box, out_h);
  const size_t nbytes = static_cast<size_t>(win.w) * 3;

  if (!need_h && !need_v) {
    for (int y = 0; y < win.h; ++y)
      std::memcpy(dst + y * dst_stride, src + (win.y + y) * stride + win.x * 3, nbytes);
  } else if (!need_h) {
    const ResampleCoeffs vc = compute_resample_coeffs_range(h, box.y0, box.y1, out_h, win.y, win.h, filter);
    vertical_pass(src + static_cast<size_t>(win.x) * 3, stride, 0, vc, 0, win.h, nbytes, dst, dst_stride);
  } else {
    // Tables for the window only: entry 0 is output column win.x, row win.y.
    const ResampleCoeffs hc = compute_resample_coeffs_range(w, box.x0, box.x1, out_w, win.x, win.w, filter);
    if (!need_v) {
      // Rows pass straight through: the horizontal results are the output.
      s.tmp.resize(static_cast<size_t>(win.h) * nbytes);
      horizontal_pass(src, w, stride, win.y, win.y + win.h, hc, 0, win.w, s.tmp.data(), s);
      for (int y = 0; y < win.h; ++y) std::memcpy(dst + y * dst_stride, s.tmp.data() + y * nbytes, nbytes);
    } else {
      const ResampleCoeffs vc = compute_resample_coeffs_range(h, box.y0, box.y1, out_h, win.y, win.h, filter);
      const auto [y0, y1] = table_rows(vc, h, win.h);
      s.tmp.resize(static_cast<size_t>(y1 - y0) * nbytes + 1);
      horizontal_pass(src, w, stride, y0, y1, hc, 0, win.w, s.tmp.data(), s);
      vertical_pass(s.tmp.data(), nbytes, y0, vc, 0, win.h, nbytes, dst, dst_stride);
    }
  }
  if (hflip) flip_rows(dst, dst_stride, win.w, win.h);
}

uint64_t resize_scratch_bytes(int src_w, int rows, int win_w) {
  return uint64_t(rows) * uint64_t(win_w) * 3 + (uint64_t(src_w) + uint64_t(win_w)) * kColBytes;
}

void resize_rgb8_rows(const RowReader& read, int w, int h, const Box& box, int out_w, int out_h, const Window& win,
                      uint8_t* dst, size_t dst_stride, ResizeScratch& s, bool hflip, Filter filter) {
  check_sizes(w, h, out_w, out_h, win);
  const bool need_h = needs_h(w, box, out_w), need_v = needs_v(h, box, out_h);
  const size_t nbytes = static_cast<size_t>(win.w) * 3;
  ResampleCoeffs vc;
  RowSpan rows{win.y, win.y + win.h};
  if (need_v) {
    vc = compute_resample_coeffs_range(h, box.y0, box.y1, out_h, win.y, win.h, filter);
    rows = table_rows(vc, h, win.h);
  }
  ResampleCoeffs hc;
  if (need_h) hc = compute_resample_coeffs_range(w, box.x0, box.x1, out_w, win.x, win.w, filter);
  // The window's columns of every needed row, resampled horizontally block by block as the rows arrive.
  s.tmp.resize(static_cast<size_t>(rows.end - rows.first) * nbytes + 1);
  for (int b0 = rows.first; b0 < rows.end; b0 += kBlock) {
    const int nb = std::min(kBlock, rows.end - b0);
    size_t stride = 0;
    const uint8_t* src = read(b0, nb, &stride);
    uint8_t* out = s.tmp.data() + static_cast<size_t>(b0 - rows.first) * nbytes;
    if (need_h) {
      horizontal_pass(src, w, stride, 0, nb, hc, 0, win.w, out, s);
    } else {
      for (int r = 0; r < nb; ++r) std::memcpy(out + r * nbytes, src + r * stride + static_cast<size_t>(win.x) * 3, nbytes);
    }
  }
  if (need_v) {
    vertical_pass(s.tmp.data(), nbytes, rows.first, vc, 0, win.h, nbytes, dst, dst_stride);
  } else {
    for (int y = 0; y < win.h; ++y) std::memcpy(dst + y * dst_stride, s.tmp.data() + y * nbytes, nbytes);
  }
  if (hflip) flip_rows(dst, dst_stride, win.w, win.h);
}

}  // namespace bt::media
