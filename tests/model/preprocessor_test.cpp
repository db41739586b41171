#include "model/preprocessor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <utility>

#include "common/error.h"

using namespace bt::model;
namespace fs = std::filesystem;

namespace {

// A model folder holding preprocessor_config.json with `json` (removed by the destructor).
struct Folder {
  fs::path dir;
  explicit Folder(const std::string& json) {
    static int n = 0;
    dir = fs::temp_directory_path() / ("bt_pp_" + std::to_string(getpid()) + "_" + std::to_string(n++));
    fs::create_directories(dir);
    if (!json.empty()) std::ofstream(dir / "preprocessor_config.json") << json;
  }
  ~Folder() { fs::remove_all(dir); }
  std::string file() const { return (dir / "preprocessor_config.json").string(); }
};

// image_normalization_of's error ("" if none) and what it printed on stderr.
std::pair<std::string, std::string> run(const std::string& json, int image_size, ImageNormalization* out = nullptr) {
  Folder f(json);
  testing::internal::CaptureStderr();
  std::string error;
  try {
    ImageNormalization n = image_normalization_of(f.dir.string(), image_size);
    if (out) *out = n;
  } catch (const bt::Error& e) {
    error = e.what();
  }
  return {error, testing::internal::GetCapturedStderr()};
}

}  // namespace

TEST(Preprocessor, OfficialFormsGiveClipQuietly) {
  // bridgetower-large-itm-mlm-itc's form (size as {"shortest_edge"}, no crop_size) and the older plain int.
  ImageNormalization n;
  n.mean = {1, 1, 1};
  auto [e, log] = run(R"({"size": {"shortest_edge": 288}, "size_divisor": 32, "image_mean": [0.48145466, 0.4578275,
      0.40821073], "image_std": [0.26862954, 0.26130258, 0.27577711], "do_center_crop": true})", 288, &n);
  EXPECT_EQ(e, "");
  EXPECT_EQ(log, "");
  EXPECT_EQ(n.mean, kClipMean);
  EXPECT_EQ(n.std, kClipStd);
  EXPECT_EQ(run(R"({"size": 288})", 288), std::make_pair(std::string(), std::string()));
  EXPECT_EQ(run("", 288), std::make_pair(std::string(), std::string()));  // no file: CLIP's, nothing said
}

TEST(Preprocessor, TheFilesMeanAndStdAreUsed) {
  ImageNormalization n;
  auto [e, log] = run(R"({"size": 224, "image_mean": [0.5, 0.25, 0.125], "image_std": [0.2, 0.3, 0.4]})", 224, &n);
  EXPECT_EQ(e, "");
  EXPECT_EQ(log, "");
  EXPECT_EQ(n.mean, (std::array<double, 3>{0.5, 0.25, 0.125}));
  EXPECT_EQ(n.std, (std::array<double, 3>{0.2, 0.3, 0.4}));
  bt::media::TransformSpec spec;
  n.apply_to(spec);
  EXPECT_EQ(spec.mean, (std::array<float, 3>{0.5f, 0.25f, 0.125f}));
  EXPECT_EQ(spec.std, (std::array<float, 3>{0.2f, 0.3f, 0.4f}));
}

TEST(Preprocessor, ADifferentSizeIsNamedOnceAndTheModelsSizeKept) {
  auto [e, log] = run(R"({"size": 288, "crop_size": 384, "image_mean": [0.5, 0.5, 0.5]})", 288);
  EXPECT_EQ(e, "");
  EXPECT_NE(log.find("resizes to 288 and crops to 384, but the model's vision image_size is 288"), std::string::npos)
      << log;
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
  std::tie(e, log) = run(R"({"size": 288, "do_center_crop": false})", 288);
  EXPECT_NE(log.find("(no crop)"), std::string::npos) << log;
}

TEST(Preprocessor, WhatBridgetuneWritesReadsBack) {
  Folder f("");
  ImageNormalization n;
  n.mean = {0.1, 0.2, 0.30000000000000004}, n.std = {0.7, 0.8, 0.9};
  write_preprocessor_config(f.file(), 224, n);
  auto c = read_preprocessor_config(f.file());
  EXPECT_EQ(c.shortest_edge, 224);
  EXPECT_EQ(c.crop_size, 224);
  EXPECT_EQ(c.norm.mean, n.mean);  // the very doubles: a saved folder repeats what it was trained with
  EXPECT_EQ(c.norm.std, n.std);
  EXPECT_EQ(run("", 224).second, "");
}

TEST(Preprocessor, MalformedFilesAreOneLineErrorsNamingTheFile) {
  for (const char* json : {R"({"size": "big"})", "not json", R"({"image_mean": [0.5, 0.5]})",
                           R"({"image_std": [0.5, 0, 0.5]})", R"({"image_std": "x"})"}) {
    auto [e, log] = run(json, 288);
    EXPECT_NE(e.find("preprocessor_config.json: "), std::string::npos) << json << " -> " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  EXPECT_NE(run(R"({"size": "big"})", 288).first.find("\"size\""), std::string::npos);
  EXPECT_NE(run(R"({"image_std": [0.5, 0, 0.5]})", 288).first.find("> 0"), std::string::npos);
  // checked in float, as the pixels are normalised: these would write +-inf
  EXPECT_NE(run(R"({"image_std": [0.5, 1e-50, 0.5]})", 288).first.find("finite in float"), std::string::npos);
  EXPECT_NE(run(R"({"image_mean": [0.5, 1e300, 0.5]})", 288).first.find("image_mean"), std::string::npos);
}
