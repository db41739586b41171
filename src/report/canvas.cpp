#include "report/canvas.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/atomic_file.h"
#include "common/error.h"
#include "report/font5x7.h"

namespace bt::report {

Canvas::Canvas(int width, int height, Rgb bg) : w_(width), h_(height), px_(size_t(width) * height * 3) {
  for (size_t i = 0; i < px_.size(); i += 3) {
    px_[i] = bg.r;
    px_[i + 1] = bg.g;
    px_[i + 2] = bg.b;
  }
}

void Canvas::set(int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
  uint8_t* p = &px_[(size_t(y) * w_ + x) * 3];
  p[0] = c.r;
  p[1] = c.g;
  p[2] = c.b;
}

Rgb Canvas::get(int x, int y) const {
  if (x < 0 || y < 0 || x >= w_ || y >= h_) return {0, 0, 0};
  const uint8_t* p = &px_[(size_t(y) * w_ + x) * 3];
  return {p[0], p[1], p[2]};
}

void Canvas::fill_rect(int x0, int y0, int x1, int y1, Rgb c) {
  if (x0 > x1) std::swap(x0, x1);
  if (y0 > y1) std::swap(y0, y1);
  x0 = std::max(x0, 0), y0 = std::max(y0, 0), x1 = std::min(x1, w_ - 1), y1 = std::min(y1, h_ - 1);
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) set(x, y, c);
}

void Canvas::line(double x0, double y0, double x1, double y1, Rgb c, int thickness) {
  if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1)) return;
  const double len = std::max(std::abs(x1 - x0), std::abs(y1 - y0));
  const int n = static_cast<int>(std::ceil(std::min(len, 1e5))) + 1;
  const int lo = -(thickness - 1) / 2, hi = thickness / 2;
  for (int i = 0; i <= n; ++i) {
    const double t = n == 0 ? 0 : double(i) / n;
    const int x = static_cast<int>(std::lround(x0 + (x1 - x0) * t));
    const int y = static_cast<int>(std::lround(y0 + (y1 - y0) * t));
    for (int dy = lo; dy <= hi; ++dy)
      for (int dx = lo; dx <= hi; ++dx) set(x + dx, y + dy, c);
  }
}

int Canvas::text_width(const std::string& s, int scale) {
  return s.empty() ? 0 : static_cast<int>(s.size()) * (kGlyphW + 1) * scale - scale;
}
int Canvas::text_height(int scale) { return (kGlyphH + 2) * scale; }

void Canvas::text(int x, int y, const std::string& s, Rgb c, int scale, bool vertical) {
  for (size_t k = 0; k < s.size(); ++k) {
    const unsigned char* g = glyph5x7(s[k]);
    const int adv = static_cast<int>(k) * (kGlyphW + 1) * scale;
    for (int r = 0; r < kGlyphH; ++r)
      for (int col = 0; col < kGlyphW; ++col) {
        if (!(g[r] & (0x10 >> col))) continue;
        for (int sy = 0; sy < scale; ++sy)
          for (int sx = 0; sx < scale; ++sx) {
            const int gx = col * scale + sx + adv, gy = (r + glyph_drop(s[k])) * scale + sy;
            if (vertical)
              set(x + gy, y - gx, c);  // rotated 90° counter-clockwise: reads bottom to top
            else
              set(x + gx, y + gy, c);
          }
      }
  }
}

namespace {
void png_write_to_string(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}
void png_flush_noop(png_structp) {}
}  // namespace

void Canvas::write_png(const std::filesystem::path& path) const {
  std::string bytes;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (!png) fail(path.string(), ": libpng init failed");
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    fail(path.string(), ": PNG encoding failed");
  }
  png_set_write_fn(png, &bytes, png_write_to_string, png_flush_noop);
  png_set_IHDR(png, info, w_, h_, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < h_; ++y) png_write_row(png, const_cast<png_bytep>(&px_[size_t(y) * w_ * 3]));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  write_file_atomic(path, bytes);
}

}  // namespace bt::report
