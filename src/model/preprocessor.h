// preprocessor_config.json, the image half of a Hugging Face BridgeTower folder (BridgeTowerImageProcessor),
// torch-free. A checkpoint's file drives bridgetune's image transform the way HF's run_clip.py example runs it
// (Transform(config.vision_config.image_size, image_processor.image_mean, image_processor.image_std)): the file's
// image_mean/image_std normalise the pixels; the output side is always the model's vision image_size, because the
// position embeddings are sized for it (resize the shortest edge to it with bicubic, center crop). Every folder
// bridgetune saves gets the file back, with the normalisation the model was trained with.
#pragma once
#include <array>
#include <string>

#include "media/transform.h"

namespace bt::model {

inline constexpr std::array<double, 3> kClipMean{0.48145466, 0.4578275, 0.40821073};
inline constexpr std::array<double, 3> kClipStd{0.26862954, 0.26130258, 0.27577711};

// The pixel normalisation of a model, (x / 255 - mean[c]) / std[c]: what its preprocessor_config.json says, or
// CLIP's. Doubles, so that a saved file repeats the numbers it was read with.
struct ImageNormalization {
  std::array<double, 3> mean = kClipMean, std = kClipStd;
  // The float copy the transform runs with (media::TransformSpec::mean/std).
  void apply_to(media::TransformSpec& spec) const;
};

struct ImageProcessorConfig {
  int shortest_edge = 288, crop_size = 288;  // "size" ({"shortest_edge": n} or n); "crop_size" (absent: size)
  ImageNormalization norm;                   // "image_mean" / "image_std"
  bool center_crop = true, normalize = true;
};

// Throws bt::Error naming the file on unreadable JSON or malformed fields (a mean/std that is not 3 numbers, a
// std that is not > 0).
ImageProcessorConfig read_preprocessor_config(const std::string& path);

// The normalisation of model folder `dir`: its preprocessor_config.json's image_mean/image_std (CLIP's when the
// folder has no such file; do_normalize is not consulted, as the HF example does not). A file whose size or
// crop_size differs from image_size is named in one line on stderr saying that image_size is used and why.
// Throws bt::Error naming the file when it is malformed.
ImageNormalization image_normalization_of(const std::string& dir, int image_size);

// The BridgeTowerImageProcessor file for bridgetune's transform at image_size with `norm` (atomic write). HF's
// BridgeTowerProcessor (which always center-crops) then gives the eval transform's pixels, bit-exact, where HF's
// resize geometry (fixed in its code, not in this file) equals torchvision's, as it does when long/short <= 1333/800
// (HF caps the long edge there), image_size * long / short has a fraction < 0.5 (HF rounds it, torchvision
// truncates) and the resized long edge - image_size is not 3 mod 4 (HF floors the crop offset, torchvision rounds
// half to even). Otherwise the crop is 1 px off or the long edge 1 px longer; past the cap HF shrinks the short
// edge below image_size and pads. transformers 4.30-4.40's bare BridgeTowerImageProcessor ignores the file's
// do_center_crop: pass do_center_crop=True. Checked: tests/model/fixtures/hf_processor.
void write_preprocessor_config(const std::string& path, int image_size, const ImageNormalization& norm);

}  // namespace bt::model
