// The train transform's named presets (`train --train_transform NAME`, the Python loader's transform=) and the
// settings that override a preset's values (--rrc_scale a,b  --rrc_ratio a,b  --hflip_p p  --color_jitter b,c,s):
// the one table of what each name means, and the one place their values are checked. Torch-free.
//
// Contract:
//  - kTransformPresets: eval (resize + center crop), train (torchvision's RandomResizedCrop defaults + flip: the
//    transform `train` always was, so fixed-seed outputs are unchanged), finetune (open_clip's fine-tuning crop:
//    scale (0.9, 1), no flip, as open_clip), strong (scale (0.08, 1), flip, colour jitter 0.4 each).
//  - apply_augment() sets spec.mode and, for a train preset, the RandomResizedCrop / flip / jitter fields: the
//    preset's values, then each override that is set (eval leaves those fields as they are). Throws bt::Error
//    naming the setting (`prefix` + its name, e.g. "--rrc_scale") for an unknown preset, a value out of range
//    (scale 0 < a <= b <= 1; ratio 0 < a <= b; hflip_p in [0, 1]; jitter strengths in [0, 100]) or an override
//    on the eval preset, which draws nothing.
//  - parse_pair / parse_triple read the flags' "a,b" / "a,b,c" (numbers, nothing else), throwing naming `name`.
#pragma once
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "media/transform.h"

namespace bt::media {

struct TransformPreset {
  std::string_view name;
  TransformMode mode;
  std::array<double, 2> scale, ratio;  // RandomResizedCrop's ranges (area fraction, aspect w / h)
  double hflip_p;
  std::array<double, 3> color_jitter;  // brightness, contrast, saturation strengths (0: off)
  std::string_view help;               // one line for --help
};

inline constexpr double kRatioMin = 3.0 / 4.0, kRatioMax = 4.0 / 3.0;  // torchvision's default ratio
inline constexpr TransformPreset kTransformPresets[] = {
    // eval draws nothing: its numbers are never read.
    {"eval", TransformMode::kEval, {1, 1}, {1, 1}, 0, {0, 0, 0}, "resize + center crop, as the reference"},
    {"train", TransformMode::kTrain, {0.08, 1}, {kRatioMin, kRatioMax}, 0.5, {0, 0, 0},
     "RandomResizedCrop scale 0.08,1 + flip"},
    {"finetune", TransformMode::kTrain, {0.9, 1}, {kRatioMin, kRatioMax}, 0.0, {0, 0, 0},
     "open_clip's fine-tuning crop: scale 0.9,1, no flip"},
    {"strong", TransformMode::kTrain, {0.08, 1}, {kRatioMin, kRatioMax}, 0.5, {0.4, 0.4, 0.4},
     "scale 0.08,1 + flip + color jitter 0.4,0.4,0.4"},
};

// nullptr when `name` is none of them.
const TransformPreset* find_transform_preset(std::string_view name);
// "eval, train, finetune or strong".
std::string transform_preset_list();

struct AugmentOptions {
  std::string preset = "eval";
  std::optional<std::array<double, 2>> rrc_scale, rrc_ratio;
  std::optional<double> hflip_p;
  std::optional<std::array<double, 3>> color_jitter;
};

// `preset_name`: how the preset is spelled where it came from ("--train_transform", "transform").
void apply_augment(const AugmentOptions& a, TransformSpec& spec, std::string_view preset_name = "--train_transform",
                   std::string_view prefix = "--");

std::array<double, 2> parse_pair(std::string_view text, std::string_view name);
std::array<double, 3> parse_triple(std::string_view text, std::string_view name);

// The ranges apply_augment checks, one value at a time (a flag's callback checks its value as it reads it).
void check_rrc_scale(const std::array<double, 2>& s, std::string_view name);
void check_rrc_ratio(const std::array<double, 2>& r, std::string_view name);
void check_hflip_p(double p, std::string_view name);
void check_color_jitter(const std::array<double, 3>& j, std::string_view name);

}  // namespace bt::media
