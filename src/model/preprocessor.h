// preprocessor_config.json, the image half of a Hugging Face BridgeTower folder (BridgeTowerImageProcessor),
// torch-free. bridgetune's image transform is fixed (resize the shortest edge to the vision image_size with
// bicubic, center crop to it, CLIP mean/std), so a checkpoint's file is read to check that it describes that
// transform, and written so every folder bridgetune saves is a complete HF model folder.
#pragma once
#include <array>
#include <string>

namespace bt::model {

struct ImageProcessorConfig {
  int shortest_edge = 288, crop_size = 288;  // "size" ({"shortest_edge": n} or n); "crop_size" (absent: size)
  std::array<double, 3> mean{0.48145466, 0.4578275, 0.40821073}, std{0.26862954, 0.26130258, 0.27577711};
  bool center_crop = true, normalize = true;
};

// Throws bt::Error naming the file on unreadable JSON or malformed fields.
ImageProcessorConfig read_preprocessor_config(const std::string& path);

// Throws bt::Error (naming `path` and what differs) unless `c` is the transform bridgetune runs at image_size.
void check_preprocessor_matches(const ImageProcessorConfig& c, int image_size, const std::string& path);

// The BridgeTowerImageProcessor file for bridgetune's transform at image_size (atomic write).
void write_preprocessor_config(const std::string& path, int image_size);

}  // namespace bt::model
