#include "model/preprocessor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/file_gate.h"
#include "common/json.h"

namespace bt::model {
namespace {

// "size" / "crop_size": an int, or {"shortest_edge": n} / {"height": n, "width": n}.
int edge(const nlohmann::json& v, const std::string& path, const char* key) {
  if (v.is_number_integer()) return v.get<int>();
  if (v.is_object()) {
    if (v.contains("shortest_edge") && v["shortest_edge"].is_number_integer()) return v["shortest_edge"].get<int>();
    if (v.contains("height") && v.contains("width") && v["height"] == v["width"] && v["height"].is_number_integer())
      return v["height"].get<int>();
  }
  bt::fail(path, ": \"", key, "\" must be an integer, {\"shortest_edge\": n} or a square {\"height\", \"width\"}");
}

std::array<double, 3> triple(const nlohmann::json& v, const std::string& path, const char* key) {
  if (!v.is_array() || v.size() != 3 || !v[0].is_number() || !v[1].is_number() || !v[2].is_number())
    bt::fail(path, ": \"", key, "\" must be a list of 3 numbers");
  return {v[0].get<double>(), v[1].get<double>(), v[2].get<double>()};
}

}  // namespace

void ImageNormalization::apply_to(media::TransformSpec& spec) const {
  for (int c = 0; c < 3; ++c) {
    spec.mean[c] = static_cast<float>(mean[c]);
    spec.std[c] = static_cast<float>(std[c]);
  }
}

ImageProcessorConfig read_preprocessor_config(const std::string& path) {
  nlohmann::json j = bt::parse_json_text(bt::read_small_file(path), path);
  if (!j.is_object()) bt::fail(path, ": not a JSON object");
  ImageProcessorConfig c;
  if (j.contains("size")) c.shortest_edge = c.crop_size = edge(j["size"], path, "size");
  if (j.contains("crop_size") && !j["crop_size"].is_null()) c.crop_size = edge(j["crop_size"], path, "crop_size");
  if (j.contains("image_mean")) c.norm.mean = triple(j["image_mean"], path, "image_mean");
  if (j.contains("image_std")) c.norm.std = triple(j["image_std"], path, "image_std");
  // Checked in float, as the pixels are normalised: a std of 1e-50 is 0 there and a mean of 1e300 is inf, and
  // (x - mean) / std must stay finite for every x in [0, 1] (else preprocess and the loaders write inf).
  for (int k = 0; k < 3; ++k) {
    const float s = static_cast<float>(c.norm.std[k]), m = static_cast<float>(c.norm.mean[k]);
    const float worst = std::max(std::fabs(0.0f - m), std::fabs(1.0f - m)) / s;
    if (!(s > 0) || !std::isfinite(s) || !std::isfinite(m) || !std::isfinite(worst) || worst > 1e30f)
      bt::fail(path, ": \"image_std\" must be finite numbers > 0 and \"image_mean\" finite, with (x - mean) / std ",
               "finite in float for x in [0, 1] (entry ", k, ")");
  }
  if (j.contains("do_center_crop") && j["do_center_crop"].is_boolean()) c.center_crop = j["do_center_crop"].get<bool>();
  if (j.contains("do_normalize") && j["do_normalize"].is_boolean()) c.normalize = j["do_normalize"].get<bool>();
  return c;
}

ImageNormalization image_normalization_of(const std::string& dir, int image_size) {
  const std::string path = dir + "/preprocessor_config.json";
  if (!std::filesystem::exists(path)) return {};
  const ImageProcessorConfig c = read_preprocessor_config(path);
  if (c.shortest_edge != image_size || c.crop_size != image_size || !c.center_crop)
    std::fprintf(stderr,
                 "%s: resizes to %d and crops to %d%s, but the model's vision image_size is %d: bridgetune resizes "
                 "the shortest edge to %d and center-crops it (the position embeddings are sized for it), "
                 "normalising with the file's image_mean/image_std\n",
                 path.c_str(), c.shortest_edge, c.crop_size, c.center_crop ? "" : " (no crop)", image_size, image_size);
  return c.norm;
}

void write_preprocessor_config(const std::string& path, int image_size, const ImageNormalization& norm) {
  // What makes HF's BridgeTowerImageProcessor give the eval transform's pixels (checked against transformers 4.30.2:
  // tests/model/fixtures/hf_processor): size_divisor 1, as its default of 32 rounds both resized edges down to a
  // multiple of 32 and so squashes a non-square image; crop_size as {"shortest_edge"}, the one form its center_crop
  // reads (later releases read crop_size, 4.30.2 size).
  nlohmann::json j = {{"image_processor_type", "BridgeTowerImageProcessor"},
                      {"do_resize", true},
                      {"size", {{"shortest_edge", image_size}}},
                      {"size_divisor", 1},
                      {"resample", 3},
                      {"do_rescale", true},
                      {"rescale_factor", 1.0 / 255},
                      {"do_normalize", true},
                      {"image_mean", norm.mean},
                      {"image_std", norm.std},
                      {"do_center_crop", true},
                      {"crop_size", {{"shortest_edge", image_size}}},
                      {"do_pad", true}};
  std::string s = j.dump(2) + "\n";
  bt::write_file_atomic(path, s);
}

}  // namespace bt::model
