// A minimal RGB raster for charts: filled rectangles, anti-alias-free thick lines, bitmap text (scaled 5x7 font),
// and PNG output through libpng (written atomically). Coordinates are pixels, origin top-left; drawing outside the
// canvas is clipped.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace bt::report {

struct Rgb {
  uint8_t r, g, b;
};

class Canvas {
 public:
  Canvas(int width, int height, Rgb background);
  int width() const { return w_; }
  int height() const { return h_; }

  void set(int x, int y, Rgb c);
  Rgb get(int x, int y) const;
  void fill_rect(int x0, int y0, int x1, int y1, Rgb c);  // inclusive corners, any order
  void line(double x0, double y0, double x1, double y1, Rgb c, int thickness = 1);
  // Text with its top-left corner at (x, y); scale multiplies the 5x7 glyph size. vertical draws bottom-to-top.
  void text(int x, int y, const std::string& s, Rgb c, int scale = 2, bool vertical = false);
  static int text_width(const std::string& s, int scale = 2);
  static int text_height(int scale = 2);

  void write_png(const std::filesystem::path& path) const;

 private:
  int w_, h_;
  std::vector<uint8_t> px_;
};

}  // namespace bt::report
