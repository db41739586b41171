// Pillow parity for every format Pillow reads (tests/media/formats, written by scripts/golden/make_format_corpus.py
// with Pillow 9.4 and torchvision): each file decodes to Image.open(f).convert("RGB") byte for byte, and the eval
// transform (`preprocess --jpeg_dct_scaling off`) is within 1 level of torchvision's Resize([S], BICUBIC) +
// CenterCrop(S) on >= 99.9% of values (the contract; in fact equal).
#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include "media/decode.h"
#include "media/transform.h"
#include "media_test_util.h"

namespace bt::media {
namespace {
using namespace testing;

const std::string kDir = BT_MEDIA_FORMATS_DIR;

std::vector<std::vector<std::string>> corpus() {
  std::ifstream f(kDir + "/manifest.txt");
  std::vector<std::vector<std::string>> out;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    std::vector<std::string> c{std::istream_iterator<std::string>(is), std::istream_iterator<std::string>()};
    if (c.size() == 6) out.push_back(c);
  }
  return out;
}

ImageU8 decode_at(const std::string& name) {
  ImageU8 img;
  decode_rgb8(read_bytes(kDir + "/" + name), kDefaultMaxImagePixels, img);
  return img;
}

ImageFormat format_of_name(const std::string& name) {
  const std::string ext = name.substr(name.rfind('.') + 1);
  return ext == "webp" ? ImageFormat::kWebp : ext == "gif" ? ImageFormat::kGif : ext == "bmp" ? ImageFormat::kBmp
         : ext == "tif"  ? ImageFormat::kTiff : ImageFormat::kJpeg;
}

TEST(MediaFormatCorpus, EveryFileDecodesToPillowsPixels) {
  const auto cases = corpus();
  ASSERT_GE(cases.size(), 50u);
  std::set<ImageFormat> seen;
  for (const auto& c : cases) {
    SCOPED_TRACE(c[0]);
    const auto bytes = read_bytes(kDir + "/" + c[0]);
    EXPECT_EQ(sniff_format(bytes), format_of_name(c[0])) << "detected from the bytes";
    seen.insert(sniff_format(bytes));
    const ImageInfo info = probe_image(bytes, kDefaultMaxImagePixels);
    EXPECT_EQ(info.width, std::stoi(c[1]));
    EXPECT_EQ(info.height, std::stoi(c[2]));
    ImageU8 img;
    ASSERT_NO_THROW(decode_rgb8(bytes, kDefaultMaxImagePixels, img));
    const ImageU8 want = decode_at(c[3]);
    ASSERT_EQ(img.width, want.width);
    ASSERT_EQ(img.height, want.height);
    const Diff d = compare(img.pixels.data(), want.pixels.data(), want.stride() * want.height);
    EXPECT_EQ(d.max_abs, 0) << "mean abs " << d.mean_abs << ", >1: " << d.over1;
  }
  EXPECT_EQ(seen.size(), 5u) << "WebP, GIF, BMP, TIFF and JPEG-with-warnings files";
}

TEST(MediaFormatCorpus, EvalTransformMatchesTorchvision) {
  auto scratch = make_scratch();
  size_t values = 0, over1 = 0;
  for (const auto& c : corpus()) {
    SCOPED_TRACE(c[0]);
    const int S = std::stoi(c[4]);
    TransformSpec spec;
    spec.image_size = S;
    spec.dct_scaling = false;
    std::vector<uint8_t> out(size_t(S) * S * 3);
    transform_to_u8(read_bytes(kDir + "/" + c[0]), spec, 0, out.data(), *scratch);
    const ImageU8 want = decode_at(c[5]);
    ASSERT_EQ(want.width, S);
    const Diff d = compare(out.data(), want.pixels.data(), out.size());
    EXPECT_LE(d.over1, d.n / 1000) << "the issue's bound";
    EXPECT_EQ(d.max_abs, 0) << "mean abs " << d.mean_abs;
    values += d.n, over1 += d.over1;
  }
  std::printf("format corpus: %zu of %zu values within 1 level of Pillow + torchvision\n", values - over1, values);
}

}  // namespace
}  // namespace bt::media
