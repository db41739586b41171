// `bridgetune preprocess IMAGE`: runs one image through the media path and writes the result as .npy, so
// users and other tools (numpy, the Pillow golden scripts) can check it. u8 = HWC RGB after resize + crop,
// f32 = the normalised CHW tensor the model sees. With --model_name_or_path, the model folder's vision image_size
// and preprocessor_config.json mean/std (model/config.h load_pretrained_config), as train and evaluate use them.
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/flag_table.h"
#include "cli/hub_flags.h"
#include "cli/loader_flags.h"
#include "common/defaults.h"
#include "common/error.h"
#include "media/npy.h"
#include "media/transform.h"
#include "model/config.h"
#include "common/file_gate.h"
#include "data/captions_parse.h"

namespace {

struct PreprocessArgs {
  std::string image, out, transform = "eval", format = "f32", model;
  bool dct = bt::media::TransformSpec{}.dct_scaling;  // the one default every command and the Python module share
  bt::cli::HubFlags hub;
  int image_size = bt::defaults::kLoaderImageSize;
  bool image_size_given = false;
  uint64_t seed = 0;
  uint64_t max_image_pixels = bt::media::kDefaultMaxImagePixels;
};

// Through the file gate: a FIFO or /dev/zero named as the image is refused, an image over the loader's byte cap too.
std::vector<uint8_t> read_file(const std::string& path) {
  std::vector<uint8_t> bytes;
  bt::read_regular_file(path, bytes, bt::data::kDefaultMaxImageBytes);
  return bytes;
}

void run(const PreprocessArgs& a) {
  using namespace bt::media;
  TransformSpec spec;
  spec.image_size = a.image_size;
  std::string size_from = "--image_size";
  if (!a.model.empty()) {  // the model's transform: its image_size (unless given) and mean/std
    const bt::model::BridgeTowerConfig cfg = bt::model::load_pretrained_config(a.hub.resolve(a.model));
    if (!a.image_size_given) spec.image_size = cfg.vision.image_size, size_from = cfg.source + ": vision_config.image_size";
    cfg.image.apply_to(spec);
  }
  check_preprocess_size(spec.image_size, a.format == "f32", size_from, "--image_size ");
  spec.mode = a.transform == "train" ? TransformMode::kTrain : TransformMode::kEval;
  spec.dct_scaling = a.dct;
  spec.max_image_pixels = a.max_image_pixels;
  const std::vector<uint8_t> bytes = read_file(a.image);
  const int S = spec.image_size;
  std::vector<uint8_t> hwc(static_cast<size_t>(S) * S * 3);
  auto scratch = make_scratch();
  try {
    transform_to_u8(bytes, spec, a.seed, hwc.data(), *scratch);
  } catch (const bt::Error& e) {
    bt::fail(a.image, ": ", e.what());
  }
  if (a.format == "u8") {
    write_npy_u8(a.out, hwc.data(), {S, S, 3});
  } else {
    std::vector<float> chw(hwc.size());
    normalize_hwc_to_chw(hwc.data(), spec, chw.data());
    write_npy_f32(a.out, chw.data(), {3, S, S});
  }
}

bt::cli::Registrar reg("preprocess", "Run one image through the eval/train transform and write a .npy", 60,
                       [](CLI::App& app) {
  auto a = std::make_shared<PreprocessArgs>();
  app.add_option("IMAGE", a->image, "JPEG, PNG, WebP, GIF, BMP or TIFF file (format told by its bytes)")->required();
  auto size = bt::cli::add_flag(app, bt::cli::flags::kImageSize, a->image_size)->check(CLI::Range(1, 16384));
  bt::cli::add_flag(app, bt::cli::flags::kModelNameOrPath, a->model);
  bt::cli::add_hub_flags(app, &a->hub.revision, &a->hub.cache_dir);
  bt::cli::add_flag(app, bt::cli::flags::kTransform, a->transform)->check(CLI::IsMember({"eval", "train"}));
  // Not --seed: elsewhere that is a run's seed, from which each sample's seed is drawn (sample_seed(seed, epoch, row)).
  app.add_option("--sample_seed", a->seed, "Per-sample seed of the train transform's random draws (the loader's "
                 "sample_seed(seed, epoch, row))")->capture_default_str();
  bt::cli::add_callback_flag(
      app, bt::cli::flags::kJpegDctScaling,
      [a](const std::string& v) { a->dct = bt::cli::parse_on_off(v, "--jpeg_dct_scaling"); }, a->dct ? "true" : "false");
  bt::cli::add_flag(app, bt::cli::flags::kMaxImagePixels, a->max_image_pixels);
  app.add_option("--format", a->format,
                 "u8: HWC RGB after resize+crop; f32: normalised CHW (the model's mean/std, else CLIP's)")
      ->capture_default_str()
      ->check(CLI::IsMember({"u8", "f32"}));
  bt::cli::add_flag(app, bt::cli::flags::kOut, a->out)->required();
  app.callback([a, size] {
    a->image_size_given = size->count() > 0;
    run(*a);
  });
});

}  // namespace
