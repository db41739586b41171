#include <gtest/gtest.h>
#include <png.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "report/canvas.h"
#include "report/font5x7.h"
#include "report/plot.h"

using namespace bt::report;

namespace {
struct Png {
  int w = 0, h = 0;
  std::vector<uint8_t> rgb;
};
Png read_png(const std::filesystem::path& p) {
  Png out;
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, p.c_str())) return out;
  img.format = PNG_FORMAT_RGB;
  out.rgb.resize(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, out.rgb.data(), 0, nullptr)) return out;
  out.w = img.width, out.h = img.height;
  return out;
}
size_t count_pixels(const Png& p, uint8_t r, uint8_t g, uint8_t b) {
  size_t n = 0;
  for (size_t i = 0; i + 2 < p.rgb.size(); i += 3) n += p.rgb[i] == r && p.rgb[i + 1] == g && p.rgb[i + 2] == b;
  return n;
}
}  // namespace

TEST(Plot, NiceTicks) {
  auto t = nice_ticks(0.0, 10.0, 5);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_DOUBLE_EQ(t[1], 2.0);
  t = nice_ticks(0.013, 0.047, 4);
  ASSERT_FALSE(t.empty());
  EXPECT_NEAR(t[0], 0.02, 1e-12);
  EXPECT_EQ(tick_label(0.02, 0.01), "0.02");
  EXPECT_EQ(tick_label(1500, 500), "1500");
  EXPECT_TRUE(nice_ticks(1, 1).empty());
}

TEST(Plot, FontHasDistinctGlyphs) {
  EXPECT_NE(std::memcmp(glyph5x7('0'), glyph5x7('8'), 7), 0);
  EXPECT_EQ(std::memcmp(glyph5x7('\x01'), glyph5x7('?'), 7), 0);
  Canvas c(20, 10, {255, 255, 255});
  c.text(0, 0, "1", {0, 0, 0}, 1);
  EXPECT_EQ(c.get(2, 0).r, 0);    // the stem of '1'
  EXPECT_EQ(c.get(0, 0).r, 255);  // left of it: background
}

TEST(Plot, LinePanelsPngHasCurvesAndAxes) {
  const auto path = std::filesystem::temp_directory_path() / ("bt_plot_" + std::to_string(::getpid()) + ".png");
  Series loss{"loss", {1, 2, 3, 4, 5}, {4.0, 3.2, 2.5, 2.1, 1.9}};
  Series sps{"samples/s", {1, 2, 3, 4, 5}, {10, 50, 52, 51, 53}};
  write_line_panels_png(path, "run", "step", {{"loss", "loss", {loss}}, {"throughput", "samples/s", {sps}}}, 800, 250);
  Png p = read_png(path);
  ASSERT_EQ(p.w, 800);
  EXPECT_GT(p.h, 500);
  EXPECT_GT(count_pixels(p, 31, 119, 180), 200u);  // the series colour
  EXPECT_GT(count_pixels(p, 20, 20, 20), 1000u);   // axes and labels
  std::filesystem::remove(path);
}

TEST(Plot, BarChartPng) {
  const auto path = std::filesystem::temp_directory_path() / ("bt_bar_" + std::to_string(::getpid()) + ".png");
  write_bar_chart_png(path, "bench", "samples/s", {{"w0", 20}, {"w2", 80}, {"in-memory", 100, true}}, 640, 400);
  Png p = read_png(path);
  ASSERT_EQ(p.w, 640);
  ASSERT_EQ(p.h, 400);
  EXPECT_GT(count_pixels(p, 44, 160, 44), 1000u);  // the highlighted bar
  std::filesystem::remove(path);
}
