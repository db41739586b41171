#include "cli/loader_flags.h"

#include <cctype>

#include "cli/flag_table.h"
#include "common/error.h"

namespace bt::cli {

// One boolean vocabulary with `train` (CLI11's, and HF's True/False): on|off, true|false, 1|0, yes|no, any case.
bool parse_on_off(const std::string& value, const std::string& flag) {
  std::string v = value;
  for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "on" || v == "true" || v == "1" || v == "yes") return true;
  if (v == "off" || v == "false" || v == "0" || v == "no") return false;
  fail(flag, ": expected true or false (on/off), got '", value, "'");
}

void add_augment_flags(CLI::App& app, media::AugmentOptions& a, const std::string& preset_flag) {
  std::string presets;
  for (const media::TransformPreset& p : media::kTransformPresets)
    presets += std::string(presets.empty() ? "" : " | ") + std::string(p.name) + " (" + std::string(p.help) + ")";
  app.add_option_function<std::string>(
         preset_flag,
         [&a, preset_flag](const std::string& v) {
           if (!media::find_transform_preset(v))
             fail(preset_flag, " must be ", media::transform_preset_list(), " (got '", v, "')");
           a.preset = v;
         },
         presets + "; the four flags below override a train preset's values")
      ->default_str(a.preset);
  app.add_option_function<std::string>(
         "--rrc_scale",
         [&a](const std::string& v) {
           a.rrc_scale = media::parse_pair(v, "--rrc_scale");
           media::check_rrc_scale(*a.rrc_scale, "--rrc_scale");
         },
         "RandomResizedCrop's range of the crop's area fraction, 0 < a <= b <= 1 (default: the preset's)")
      ->type_name("A,B");
  app.add_option_function<std::string>(
         "--rrc_ratio",
         [&a](const std::string& v) {
           a.rrc_ratio = media::parse_pair(v, "--rrc_ratio");
           media::check_rrc_ratio(*a.rrc_ratio, "--rrc_ratio");
         },
         "RandomResizedCrop's range of the crop's aspect ratio w/h, 0 < a <= b (default 0.75,1.333)")
      ->type_name("A,B");
  app.add_option_function<double>(
         "--hflip_p",
         [&a](double p) {
           media::check_hflip_p(p, "--hflip_p");
           a.hflip_p = p;
         },
         "Probability of a horizontal flip (default: the preset's)")
      ->type_name("P");
  app.add_option_function<std::string>(
         "--color_jitter",
         [&a](const std::string& v) {
           a.color_jitter = media::parse_triple(v, "--color_jitter");
           media::check_color_jitter(*a.color_jitter, "--color_jitter");
         },
         "ColorJitter's brightness,contrast,saturation strengths: each factor uniform in [max(0, 1 - x), 1 + x], "
         "applied in that order to the crop (0: off; default: the preset's)")
      ->type_name("B,C,S");
}

void add_loader_flags(CLI::App& app, loader::LoaderOptions& o, source::ReadOptions& read, bool with_workers) {
  if (with_workers) add_flag(app, flags::kNumWorkers, o.num_workers);
  add_flag(app, flags::kPrefetchBatches, o.prefetch_batches);
  add_flag(app, flags::kImageSize, o.transform.image_size);
  add_callback_flag(
      app, flags::kJpegDctScaling,
      [&o](const std::string& v) { o.transform.dct_scaling = parse_on_off(v, "--jpeg_dct_scaling"); },
      o.transform.dct_scaling ? "on" : "off");
  add_flag(app, flags::kMaxImagePixels, o.transform.max_image_pixels);
  add_flag(app, flags::kMaxImageBytes, read.max_image_bytes)->check(CLI::PositiveNumber);
  add_enum(app, flags::kOnBadSample, read.on_bad, kOnBadWords);
  add_flag(app, flags::kDecodedCacheMb, o.decoded_cache_mb);
  add_flag(app, flags::kImageColumn, read.image_column);
  add_flag(app, flags::kCaptionColumn, read.caption_column);
  add_flag(app, flags::kSeed, o.sampler.seed);
  add_callback_flag(
      app, flags::kDedupeImagesInBatch,
      [&o](const std::string& v) { o.sampler.dedupe_images_in_batch = parse_on_off(v, "--dedupe_images_in_batch"); },
      o.sampler.dedupe_images_in_batch ? "on" : "off");
  app.add_option_function<std::string>(
         "--loader_output",
         [&o](const std::string& v) {
           if (v == "f32") o.output_float = true, o.output_u8 = false;
           else if (v == "u8") o.output_float = false, o.output_u8 = true;
           else if (v == "both") o.output_float = o.output_u8 = true;
           else fail("--loader_output: expected f32, u8 or both, got '", v, "'");
         },
         "batch pixels as normalised float NCHW (f32), uint8 NHWC for device-side normalisation (u8), or both")
      ->default_str(o.output_u8 ? (o.output_float ? "both" : "u8") : "f32");
}

}  // namespace bt::cli
