#include "model/preprocessor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"

using namespace bt::model;
namespace fs = std::filesystem;

namespace {

std::string file_with(const std::string& json) {
  static int n = 0;
  auto p = fs::temp_directory_path() / ("bt_pp_" + std::to_string(getpid()) + "_" + std::to_string(n++) + ".json");
  std::ofstream(p) << json;
  return p.string();
}

std::string check_error(const std::string& json, int image_size) {
  auto p = file_with(json);
  try {
    check_preprocessor_matches(read_preprocessor_config(p), image_size, p);
  } catch (const bt::Error& e) {
    fs::remove(p);
    return e.what();
  }
  fs::remove(p);
  return "";
}

}  // namespace

TEST(Preprocessor, OfficialFormsMatchTheTransform) {
  // bridgetower-large-itm-mlm-itc's form (size as {"shortest_edge"}, no crop_size) and the older plain int.
  EXPECT_EQ(check_error(R"({"size": {"shortest_edge": 288}, "size_divisor": 32, "image_mean": [0.48145466, 0.4578275,
      0.40821073], "image_std": [0.26862954, 0.26130258, 0.27577711], "do_center_crop": true})", 288), "");
  EXPECT_EQ(check_error(R"({"size": 288})", 288), "");
}

TEST(Preprocessor, WhatBridgetuneWritesReadsBackAndMatches) {
  auto p = file_with("");
  write_preprocessor_config(p, 224);
  auto c = read_preprocessor_config(p);
  EXPECT_EQ(c.shortest_edge, 224);
  EXPECT_EQ(c.crop_size, 224);
  EXPECT_NO_THROW(check_preprocessor_matches(c, 224, p));
  EXPECT_THROW(check_preprocessor_matches(c, 288, p), bt::Error);
  fs::remove(p);
}

TEST(Preprocessor, DifferentTransformsAreOneLineErrors) {
  std::string e = check_error(R"({"size": 288, "crop_size": 384})", 288);
  EXPECT_NE(e.find("crops to 384"), std::string::npos) << e;
  e = check_error(R"({"size": 288, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]})", 288);
  EXPECT_NE(e.find("image_mean"), std::string::npos) << e;
  e = check_error(R"({"size": "big"})", 288);
  EXPECT_NE(e.find("\"size\""), std::string::npos) << e;
  e = check_error("not json", 288);
  EXPECT_NE(e.find("not a JSON object"), std::string::npos) << e;
}
