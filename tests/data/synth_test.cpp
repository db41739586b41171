#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <set>
#include <sstream>

#include "common/error.h"
#include "data/captions_dataset.h"
#include "data/synth.h"
#include "test_util.h"

using namespace bt::data;
using bt::data::testing::TempDir;

namespace {

SynthOptions small(uint64_t seed = 7) {
  SynthOptions o;
  o.n = 24;
  o.seed = seed;
  o.min_width = 96;
  o.max_width = 200;
  return o;
}

size_t words(const std::string& s) {
  std::istringstream is(s);
  std::string w;
  size_t n = 0;
  while (is >> w) ++n;
  return n;
}

}  // namespace

TEST(Synth, SameSeedSameBytesDifferentSeedDiffers) {
  auto o = small();
  EXPECT_EQ(synth_jpeg(o, 3), synth_jpeg(o, 3));
  EXPECT_NE(synth_jpeg(o, 3), synth_jpeg(o, 4));
  EXPECT_NE(synth_jpeg(o, 3), synth_jpeg(small(8), 3));
  auto p1 = synth_plan(o), p2 = synth_plan(o), p3 = synth_plan(small(8));
  EXPECT_EQ(p1.captions, p2.captions);
  EXPECT_EQ(p1.image_of_row, p2.image_of_row);
  EXPECT_NE(p1.captions, p3.captions);
}

TEST(Synth, PlanSharesImagesAcrossRows) {
  SynthOptions o = small();
  o.n = 400;
  auto p = synth_plan(o);
  EXPECT_EQ(p.images, 100u);
  ASSERT_EQ(p.captions.size(), 400u);
  std::set<uint32_t> used(p.image_of_row.begin(), p.image_of_row.end());
  EXPECT_EQ(used.size(), 100u);  // every image is used, several times on average
  EXPECT_EQ(*used.rbegin(), 99u);
  std::set<std::string> distinct(p.captions.begin(), p.captions.end());
  EXPECT_GT(distinct.size(), 390u);
  o.images = 7;
  EXPECT_EQ(synth_plan(o).images, 7u);
}

TEST(Synth, CaptionsHave10To25Words) {
  size_t lo = 100, hi = 0;
  for (uint64_t s = 0; s < 2000; ++s) {
    std::string c = synth_caption(s);
    size_t n = words(c);
    lo = std::min(lo, n);
    hi = std::max(hi, n);
    ASSERT_TRUE(c.back() == '.' || c.back() == '?') << c;
    ASSERT_TRUE(c[0] >= 'A' && c[0] <= 'Z') << c;
  }
  EXPECT_EQ(lo, 10u);
  EXPECT_EQ(hi, 25u);
}

TEST(Synth, ImagesDecodeWithRequestedSizes) {
  auto o = small();
  tjhandle tj = tjInitDecompress();
  for (size_t i = 0; i < 6; ++i) {
    int w = 0, h = 0;
    auto jpeg = synth_jpeg(o, i, &w, &h);
    int jw, jh, sub, cs;
    ASSERT_EQ(tjDecompressHeader3(tj, jpeg.data(), jpeg.size(), &jw, &jh, &sub, &cs), 0);
    EXPECT_EQ(jw, w);
    EXPECT_EQ(jh, h);
    EXPECT_GE(w, o.min_width);
    EXPECT_LE(w, o.max_width);
    EXPECT_GE(double(w) / h, o.min_aspect - 0.02);
    EXPECT_LE(double(w) / h, o.max_aspect + 0.02);
    std::vector<uint8_t> rgb(size_t(w) * h * 3);
    ASSERT_EQ(tjDecompress2(tj, jpeg.data(), jpeg.size(), rgb.data(), w, 0, h, TJPF_RGB, 0), 0);
    // Off-white paper dominates, and there is dark ink somewhere.
    size_t light = 0, dark = 0;
    for (size_t k = 0; k < rgb.size(); k += 3) {
      light += rgb[k] > 200;
      dark += rgb[k] < 100;
    }
    EXPECT_GT(light, size_t(w) * h / 2);
    EXPECT_GT(dark, 0u);
  }
  tjDestroy(tj);
}

TEST(Synth, DefaultSizesAndBitrateLikeScans) {
  SynthOptions o;
  o.seed = 1;
  int w, h;
  auto jpeg = synth_jpeg(o, 0, &w, &h);
  EXPECT_GE(w, 800);
  EXPECT_LE(w, 1700);
  double bpp = jpeg.size() * 8.0 / (double(w) * h);
  EXPECT_GT(bpp, 0.8);
  EXPECT_LT(bpp, 3.0);
}

TEST(Synth, WrittenFolderIsIdenticalForAnyThreadCount) {
  TempDir a, b;
  auto o = small();
  o.threads = 1;
  write_synth(a.path(), o);
  o.threads = 3;
  write_synth(b.path(), o);
  auto da = open_dataset(a.path()), db = open_dataset(b.path());
  ASSERT_EQ(da->size(), o.n);
  ASSERT_EQ(db->size(), o.n);
  auto plan = synth_plan(o);
  std::vector<uint8_t> ia, ib;
  for (size_t i = 0; i < o.n; ++i) {
    EXPECT_EQ(da->caption(i), plan.captions[i]);
    da->read_image(i, ia);
    db->read_image(i, ib);
    ASSERT_EQ(ia, ib);
    EXPECT_EQ(ia, synth_jpeg(o, plan.image_of_row[i]));
  }
  EXPECT_EQ(static_cast<CaptionsDataset&>(*da).num_images(), plan.images);
}

TEST(Synth, InMemoryDataset) {
  auto o = small();
  auto ds = synth_dataset(o);
  auto plan = synth_plan(o);
  ASSERT_EQ(ds->size(), o.n);
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < o.n; ++i) {
    EXPECT_EQ(ds->caption(i), plan.captions[i]);
    EXPECT_EQ(ds->image_key(i), "synth:" + std::to_string(plan.image_of_row[i]));
    ds->read_image(i, bytes);
    EXPECT_EQ(bytes, synth_jpeg(o, plan.image_of_row[i]));
  }
}

TEST(Synth, RejectsBadOptions) {
  SynthOptions o = small();
  o.n = 0;
  EXPECT_THROW(synth_plan(o), bt::Error);
  o = small();
  o.max_width = 10;
  EXPECT_THROW(synth_jpeg(o, 0), bt::Error);
}
