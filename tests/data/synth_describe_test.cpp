// The synthetic captions say what the picture shows: facts from the dry run equal the rendered drawing's,
// the caption states them, the balloon is where and what colour the caption says, and the matching split has
// one true caption among distractors that state other facts.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "data/synth.h"
#include "data/synth_draw.h"
#include "test_util.h"

using namespace bt::data;

namespace {

SynthOptions accented(size_t n = 40, size_t images = 16) {
  SynthOptions o;
  o.n = n;
  o.images = images;
  o.seed = 11;
  o.min_width = 160;
  o.max_width = 320;
  o.accents = true;
  return o;
}

std::vector<uint8_t> decode_rgb(const std::vector<uint8_t>& jpeg, int& w, int& h) {
  tjhandle tj = tjInitDecompress();
  int sub, cs;
  tjDecompressHeader3(tj, jpeg.data(), jpeg.size(), &w, &h, &sub, &cs);
  std::vector<uint8_t> rgb(size_t(w) * h * 3);
  EXPECT_EQ(tjDecompress2(tj, jpeg.data(), jpeg.size(), rgb.data(), w, 0, h, TJPF_RGB, 0), 0);
  tjDestroy(tj);
  return rgb;
}

const char* kNumbers[] = {"No", "One", "Two", "Three"};  // a caption starts with its people

}  // namespace

TEST(SynthDescribe, DryRunYieldsTheFactsOfTheRenderedDrawing) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    synth::Rng a(seed), b(seed);
    synth::Canvas real(200, 150), dry(200, 150, /*dry=*/true);
    synth::SceneFacts fr = synth::draw_cartoon(real, a), fd = synth::draw_cartoon(dry, b);
    EXPECT_EQ(synth::scene_key(fr), synth::scene_key(fd)) << "seed " << seed;
    EXPECT_EQ(a.next(), b.next()) << "the dry run must make the same random choices";
    EXPECT_GE(fr.figures, 1);
    EXPECT_LE(fr.hats, fr.figures);
  }
}

TEST(SynthDescribe, CaptionStatesTheFacts) {
  int islands = 0, rooms = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    synth::Rng r(seed);
    synth::Canvas dry(300, 200, true);
    synth::SceneFacts f = synth::draw_cartoon(dry, r);
    f.balloon = int(seed % synth::accent_colours().size());
    f.balloon_side = int(seed % 3);
    const std::string d = synth::describe_scene(f, seed);
    (f.outdoor ? islands : rooms)++;
    EXPECT_EQ(d.find("island") != std::string::npos, f.outdoor) << d;
    if (!f.outdoor) {
      EXPECT_EQ(d.find("window") != std::string::npos, f.windows > 0) << d;
      EXPECT_EQ(d.find("table") != std::string::npos, f.table) << d;
    }
    if (f.figures > 1) {
      EXPECT_EQ(d.rfind(std::string(kNumbers[f.figures]) + " ", 0), 0u) << d;
    }
    EXPECT_NE(d.find(std::string(synth::accent_colours()[size_t(f.balloon)].name) + " balloon"), std::string::npos);
    EXPECT_NE(d.find(f.balloon_side == 0 ? "left" : f.balloon_side == 1 ? "centre" : "right"), std::string::npos);
  }
  EXPECT_GT(islands, 5);
  EXPECT_GT(rooms, 5);
}

TEST(SynthDescribe, BalloonIsPaintedWhereAndAsTheCaptionSays) {
  const SynthOptions o = accented();
  const SynthPlan plan = synth_plan(o);
  for (size_t row = 0; row < 8; ++row) {
    const size_t image = plan.image_of_row[row];
    int w, h;
    std::vector<uint8_t> rgb = decode_rgb(synth_jpeg(o, image), w, h);
    const std::string& caption = plan.captions[row];
    int colour = -1, side = -1;
    for (size_t c = 0; c < synth::accent_colours().size(); ++c)
      if (caption.find(std::string(synth::accent_colours()[c].name) + " balloon") != std::string::npos) colour = int(c);
    side = caption.find("left") != std::string::npos ? 0 : caption.find("centre") != std::string::npos ? 1 : 2;
    ASSERT_GE(colour, 0) << caption;
    const int x = int((0.2f + 0.3f * float(side)) * float(w)), y = int(0.2f * float(h));
    const uint8_t* px = &rgb[(size_t(y) * size_t(w) + size_t(x)) * 3];
    const uint8_t* want = synth::accent_colours()[size_t(colour)].rgb;
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(px[k], want[k], 24) << caption << " channel " << k;
  }
}

TEST(SynthDescribe, AccentsChangeOnlyTheBalloonAndItsCaption) {
  SynthOptions plain = accented();
  plain.accents = false;
  const SynthPlan a = synth_plan(accented()), b = synth_plan(plain);
  for (size_t i = 0; i < a.captions.size(); ++i) {
    EXPECT_EQ(a.image_of_row[i], b.image_of_row[i]);
    EXPECT_NE(a.captions[i].find("balloon"), std::string::npos);
    EXPECT_EQ(b.captions[i].find("balloon"), std::string::npos);
  }
  int w, h, w2, h2;
  auto x = decode_rgb(synth_jpeg(accented(), 3), w, h), y = decode_rgb(synth_jpeg(plain, 3), w2, h2);
  ASSERT_EQ(w, w2);
  ASSERT_EQ(h, h2);
  // The lower half holds no balloon: identical drawing (up to JPEG blocks straddling the balloon's string).
  size_t differ = 0;
  for (size_t p = size_t(w) * size_t(h / 2 + 16) * 3; p < x.size(); ++p) differ += std::abs(x[p] - y[p]) > 2;
  EXPECT_EQ(differ, 0u);
}

TEST(SynthDescribe, MatchingRowsHoldOneTrueCaptionAndDistractorsThatDiffer) {
  const SynthOptions o = accented(60, 30);
  const SynthPlan plan = synth_plan(o);
  const auto rows = synth_matching(plan, o.seed);
  ASSERT_EQ(rows.size(), plan.captions.size());
  std::set<int> labels;
  for (size_t i = 0; i < rows.size(); ++i) {
    const MatchingRow& m = rows[i];
    ASSERT_EQ(m.choices.size(), 5u);
    EXPECT_EQ(m.image, plan.image_of_row[i]);
    EXPECT_EQ(m.choices[size_t(m.label)], plan.captions[i]);
    labels.insert(m.label);
    std::set<std::string> scenes;
    for (size_t c = 0; c < m.choices.size(); ++c) {
      const auto it = std::find(plan.captions.begin(), plan.captions.end(), m.choices[c]);
      ASSERT_NE(it, plan.captions.end());
      scenes.insert(plan.scene_of_image[plan.image_of_row[size_t(it - plan.captions.begin())]]);
    }
    EXPECT_EQ(scenes.size(), 5u) << "every choice states other facts";
  }
  EXPECT_EQ(labels.size(), 5u) << "the true caption's position varies";
}

TEST(SynthDescribe, WritesTheMatchingSplitBesideTheCaptions) {
  bt::data::testing::TempDir dir;
  const SynthOptions o = accented(20, 10);
  write_synth(dir.path(), o);
  std::ifstream f(dir / "matching.jsonl");
  std::string line;
  size_t n = 0;
  const SynthPlan plan = synth_plan(o);
  while (std::getline(f, line)) {
    auto row = nlohmann::json::parse(line);
    const std::string label = row.at("label");
    ASSERT_EQ(label.size(), 1u);
    const size_t k = size_t(label[0] - 'A');
    ASSERT_LT(k, row.at("caption_choices").size());
    EXPECT_EQ(row.at("caption_choices")[k], plan.captions[n]);
    EXPECT_EQ(row.at("image"), "images/" + std::string(6 - std::to_string(plan.image_of_row[n]).size(), '0') +
                                   std::to_string(plan.image_of_row[n]) + ".jpg");
    ++n;
  }
  EXPECT_EQ(n, o.n);
}
