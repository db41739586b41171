// Image decode memory (issue 25): what a decode holds is known from the header and refused above the budget
// before it is allocated; a non-interlaced PNG is decoded row by row into the resize, with the same pixels.
#include <gtest/gtest.h>

#include "../common/error_of.h"
#include "media/decode.h"
#include "media/jpeg_frame.h"
#include "media/plan.h"
#include "media/resize.h"
#include "media/transform.h"
#include "media_test_util.h"

namespace bt::media {
namespace {
using namespace testing;
using bt::test::error_of;

std::vector<uint8_t> run(const std::vector<uint8_t>& bytes, const TransformSpec& spec, uint64_t seed) {
  auto scratch = make_scratch();
  std::vector<uint8_t> out(size_t(spec.image_size) * spec.image_size * 3);
  transform_to_u8(bytes, spec, seed, out.data(), *scratch);
  return out;
}

// The transform as it was before rows were streamed: the whole image decoded, then the plan's resize.
std::vector<uint8_t> whole_image_transform(const std::vector<uint8_t>& bytes, const TransformSpec& spec, uint64_t seed) {
  const TransformPlan p = plan_transform(probe_image(bytes, spec.max_image_pixels), spec, seed);
  ImageU8 img;
  decode_rgb8(bytes, spec.max_image_pixels, img, p.scale_num);
  const int S = p.image_size;
  std::vector<uint8_t> out(size_t(S) * S * 3);
  ResizeScratch rs;
  resize_rgb8(img.row(p.y.src_begin) + p.x.src_begin * 3, p.x.src_extent, p.y.src_extent, img.stride(),
              Box{p.x.box0, p.y.box0, p.x.box1, p.y.box1}, p.x.out_full, p.y.out_full,
              Window{p.x.out_begin, p.y.out_begin, S, S}, out.data(), S * 3, rs, p.flip);
  return out;
}

TEST(MediaDecodeBudget, StreamedPngEqualsWholeImageDecode) {
  // Every PNG colour type; 288x288 and 37x301 span several 32-row blocks; train crops start below row 0.
  for (const char* name : {"cartoon_288x288.png", "gray16_37x301.png", "palette.png", "gray16.png", "rgb16.png",
                           "rgba.png", "la.png", "bilevel.png", "cartoon_17x9.png"}) {
    const auto bytes = read_bytes(golden_path(name));
    ASSERT_TRUE(png_streams(probe_image(bytes, kDefaultMaxImagePixels))) << name;
    for (int size : {7, 64, 288}) {
      TransformSpec spec;
      spec.image_size = size;
      EXPECT_EQ(run(bytes, spec, 0), whole_image_transform(bytes, spec, 0)) << name << " eval " << size;
      spec.mode = TransformMode::kTrain;
      for (uint64_t seed : {1, 2, 3, 4})
        EXPECT_EQ(run(bytes, spec, seed), whole_image_transform(bytes, spec, seed)) << name << " seed " << seed;
    }
  }
}

TEST(MediaDecodeBudget, InterlacedPngIsDecodedWhole) {
  const auto interlaced = read_bytes(golden_path("cartoon_17x9_interlaced.png"));
  const ImageInfo info = probe_image(interlaced, kDefaultMaxImagePixels);
  EXPECT_TRUE(info.interlaced);
  EXPECT_FALSE(png_streams(info));
  TransformSpec spec;
  spec.image_size = 32;
  EXPECT_EQ(run(interlaced, spec, 0), run(read_bytes(golden_path("cartoon_17x9.png")), spec, 0));
}

TEST(MediaDecodeBudget, HeaderTellsWhatADecodeHolds) {
  const ImageInfo prog = probe_image(read_bytes(golden_path("progressive.jpg")), kDefaultMaxImagePixels);
  EXPECT_EQ(prog.coefficient_bytes, jpeg_coefficient_bytes(read_jpeg_frame(read_bytes(golden_path("progressive.jpg")))));
  EXPECT_GT(prog.coefficient_bytes, 0u);
  EXPECT_EQ(probe_image(read_bytes(golden_path("sub444.jpg")), kDefaultMaxImagePixels).coefficient_bytes, 0u);
  EXPECT_EQ(probe_image(read_bytes(golden_path("cmyk.jpg")), kDefaultMaxImagePixels).temp_bytes_per_pixel, 4);
  EXPECT_EQ(probe_image(read_bytes(golden_path("gray16.png")), kDefaultMaxImagePixels).temp_bytes_per_pixel, 2);
  // 4:4:4 progressive, 9459^2: 1183^2 blocks of 128 bytes per component, the 673 MB case.
  JpegFrame f;
  f.sof = 2, f.width = f.height = 9459, f.num_components = 3, f.scan_components = 1;
  for (int c = 0; c < 3; ++c) f.components[c] = JpegComponent{c + 1, 1, 1};
  EXPECT_EQ(jpeg_coefficient_bytes(f), 3ull * 1183 * 1183 * 128);
  f.sof = 0;  // baseline, but the first scan holds one component of three: libjpeg buffers the image too
  EXPECT_EQ(jpeg_coefficient_bytes(f), 3ull * 1183 * 1183 * 128);
  f.scan_components = 3;
  EXPECT_EQ(jpeg_coefficient_bytes(f), 0u);
  EXPECT_EQ(decode_budget(kDefaultMaxImagePixels), 2 * kDefaultMaxImagePixels);
  EXPECT_EQ(decode_budget(1000), uint64_t(64) << 20);
}

TEST(MediaDecodeBudget, RefusedBeforeAllocatingNamingTheFlag) {
  TransformSpec spec;
  // A 9459^2 progressive JPEG within the pixel cap: its coefficients alone are 3x the budget.
  const auto prog = with_jpeg_size(read_bytes(golden_path("progressive.jpg")), 9459, 9459);
  std::string e = error_of([&] { run(prog, spec, 0); });
  EXPECT_NE(e.find("--max_image_pixels"), std::string::npos) << e;
  EXPECT_NE(e.find("progressive"), std::string::npos) << e;
  e = error_of([&] { ImageU8 img; decode_rgb8(prog, kDefaultMaxImagePixels, img, 1); });  // the decoder's own check
  EXPECT_NE(e.find("--max_image_pixels"), std::string::npos) << e;
  // A baseline one decodes small at its DCT scale; at full size it is refused, naming the other way out too.
  const auto base = with_jpeg_size(read_bytes(golden_path("sub444.jpg")), 9459, 9459);
  e = error_of([&] { run(base, spec, 0); });
  EXPECT_EQ(e.find("--max_image_pixels"), std::string::npos) << e;  // its (truncated) data is the error
  spec.dct_scaling = false;
  e = error_of([&] { run(base, spec, 0); });
  EXPECT_NE(e.find("--jpeg_dct_scaling"), std::string::npos) << e;
  // Raising the pixel cap raises the budget.
  spec.max_image_pixels = 4 * kDefaultMaxImagePixels;
  e = error_of([&] { run(base, spec, 0); });
  EXPECT_EQ(e.find("--max_image_pixels"), std::string::npos) << e;
}

}  // namespace
}  // namespace bt::media
