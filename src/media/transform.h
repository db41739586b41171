// The per-sample image path the loader runs in its workers: encoded bytes -> decoded RGB8 -> resized and
// cropped uint8 HWC square -> (at batch time) normalised float CHW. Pure functions of their inputs and a
// per-sample seed, so any worker count gives identical batches.
//
// Contract (implemented in media/*.cpp):
//  - transform_to_u8() decodes `encoded` (any format of media/decode.h, told by its bytes, never a name) and
//    writes spec.image_size^2 * 3 bytes, RGB interleaved, to out_hwc. With spec.mode == kEval it is the
//    reference eval transform (resize shortest edge to image_size with Pillow's antialiased bicubic, then
//    center crop); with kTrain it is torchvision's RandomResizedCrop(scale, ratio) + horizontal flip with
//    probability hflip_p, then colour jitter of the uint8 output when color_jitter has a non-zero strength
//    (media/color_jitter_math.h: brightness, contrast, saturation in that order), the random draws taken from
//    `sample_seed` only. The named presets of these settings are media/augment.h's.
//  - Bad input (corrupt/truncated/unsupported bytes, more than spec.max_image_pixels pixels) throws
//    bt::Error with the reason only; the caller prefixes which file/row it was.
//  - normalize_hwc_to_chw() maps uint8 HWC to float CHW: (x / 255 - mean[c]) / std[c], with the spec's mean/std
//    (CLIP's unless the model folder's preprocessor_config.json names others: model/preprocessor.h).
//  - MediaScratch holds per-thread reusable buffers (decode output, resize intermediates); one per worker.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "common/defaults.h"

namespace bt::media {

// CLIP's normalisation, as the BridgeTower processor uses.
inline constexpr float kClipMean[3] = {0.48145466f, 0.4578275f, 0.40821073f};
inline constexpr float kClipStd[3] = {0.26862954f, 0.26130258f, 0.27577711f};
// Pillow's Image.MAX_IMAGE_PIXELS: larger images are refused as decompression bombs.
inline constexpr uint64_t kDefaultMaxImagePixels = 89478485;

enum class TransformMode { kEval, kTrain };

struct TransformSpec {
  int image_size = defaults::kLoaderImageSize;
  TransformMode mode = TransformMode::kEval;
  bool dct_scaling = true;  // decode JPEGs at a reduced DCT scale when the output stays >= the target
  uint64_t max_image_pixels = kDefaultMaxImagePixels;
  // RandomResizedCrop / flip parameters (kTrain only), torchvision's defaults.
  double scale_min = 0.08, scale_max = 1.0;
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;
  double hflip_p = 0.5;
  // ColorJitter(brightness, contrast, saturation) strengths (kTrain only): each x > 0 scales by a factor drawn
  // from [max(0, 1 - x), 1 + x]; 0: off (the default, so `train` draws and outputs what it always did).
  std::array<double, 3> color_jitter{0.0, 0.0, 0.0};
  // The float output's normalisation, (x / 255 - mean[c]) / std[c]: the one copy every normalising path reads
  // (the CPU loader, `evaluate`, the GPU media pipeline's lookup table, the Python module).
  std::array<float, 3> mean{kClipMean[0], kClipMean[1], kClipMean[2]};
  std::array<float, 3> std{kClipStd[0], kClipStd[1], kClipStd[2]};
};

// What one sample's transform reports besides its pixels: its times, and whether its decoder warned.
struct TransformTiming {
  double decode_s = 0;
  double transform_s = 0;  // resize + crop (+ flip, + colour jitter)
  bool decoded_with_warnings = false;  // ImageU8::decoded_with_warnings of its decode
};

// Opaque per-thread buffers. Complete here (with an out-of-line destructor) so that callers can destroy
// the std::unique_ptr<MediaScratch> make_scratch() returns.
class MediaScratch {
 public:
  MediaScratch();
  ~MediaScratch();
  MediaScratch(const MediaScratch&) = delete;
  MediaScratch& operator=(const MediaScratch&) = delete;
  struct Impl;
  std::unique_ptr<Impl> impl;
};
std::unique_ptr<MediaScratch> make_scratch();

void transform_to_u8(std::span<const uint8_t> encoded, const TransformSpec& spec, uint64_t sample_seed,
                     uint8_t* out_hwc, MediaScratch& scratch, TransformTiming* timing = nullptr);

void normalize_hwc_to_chw(const uint8_t* hwc, int width, int height, float* chw,
                          const float mean[3] = kClipMean, const float std[3] = kClipStd);
// `preprocess` (the CLI and the Python module's preprocess()) holds one image's output whole: the uint8 HWC square
// (3 bytes a pixel) and, for float output, the normalised CHW one (12 more). At most kMaxPreprocessBytes, so a
// config.json's image_size of 8192 (1 GB of output) is refused before any of it is allocated; with the decode
// budget (media/decode.h) and the process itself one preprocess stays under 400 MB. Throws naming `what` (the
// flag or the config field image_size came from) and the largest image_size that fits, to pass with `flag`.
inline constexpr uint64_t kMaxPreprocessBytes = uint64_t(64) << 20;
void check_preprocess_size(int image_size, bool float_output, const std::string& what, const std::string& flag);

// The spec's square output (image_size^2 pixels) with the spec's mean/std.
inline void normalize_hwc_to_chw(const uint8_t* hwc, const TransformSpec& spec, float* chw) {
  normalize_hwc_to_chw(hwc, spec.image_size, spec.image_size, chw, spec.mean.data(), spec.std.data());
}

}  // namespace bt::media
