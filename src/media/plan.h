// The media planning step (DALI's Setup/Run split, done once): from an image's header, the transform spec and
// the sample's seed, every geometric decision of the transform — DCT decode scale, the train crop rect and flip,
// and the region of the decoded image to resample onto the output. The CPU transform (media/transform.cpp), the
// loader's decode-only path (loader/decode_only.cpp) and the CUDA kernels' setup (cuda::spec_of) all consume
// this plan; nothing else decides geometry.
//
// Contract:
//  - Eval: torchvision Resize(image_size) on the shortest edge (long side int(size * long / short)), then
//    CenterCrop (offsets Python-rounded half to even). Train: RandomResizedCrop drawn from SampleRng(sample_seed)
//    (media/random_crop.h), then the flip with probability hflip_p from the same generator, then the colour jitter
//    factors (media/color_jitter.h) of the strengths that are non-zero (none drawn with all zero, so the crop and
//    flip of a seed do not depend on the jitter setting).
//  - scale_num: the largest DCT reduction keeping the sampled region >= image_size px on both axes
//    (choose_jpeg_scale); 8 for PNG or spec.dct_scaling off. dec_w x dec_h is the decoded size at that scale.
//  - x / y: per axis, resample source pixels [src_begin, src_begin + src_extent) of the DECODED image, Pillow box
//    [box0, box1) relative to src_begin, onto out_full pixels, and keep [out_begin, out_begin + image_size).
//    Full-scale train samples crop (src = the rect, edges clamp the filter as PIL's crop() + resize()); all
//    others resample a float box of the whole decoded image (a DCT-scaled image covers W * scale/8 pixels'
//    worth of the original; its last pixel is partial).
//  - Throws bt::Error (reason only) for an image_size out of 1..16384 or an image too elongated to resize.
#pragma once
#include <cstdint>

#include "media/color_jitter_math.h"
#include "media/decode.h"
#include "media/random_crop.h"
#include "media/transform.h"

namespace bt::media {

struct PlanAxis {
  int src_begin = 0, src_extent = 0;
  double box0 = 0, box1 = 0;
  int out_full = 0, out_begin = 0;
};

struct TransformPlan {
  ImageFormat format = ImageFormat::kUnknown;
  int orig_w = 0, orig_h = 0;  // full-resolution size (header)
  int scale_num = 8;           // DCT decode scale over 8
  int dec_w = 0, dec_h = 0;    // decoded size at scale_num
  int image_size = 0;          // output: image_size x image_size
  bool train = false;
  CropRect crop{0, 0, 0, 0};   // train: RandomResizedCrop's rect in ORIGINAL pixels (eval: the whole image)
  bool flip = false;           // train: horizontal flip of the output
  JitterFactors jitter;        // train: colour jitter of the uint8 output (all 1: none)
  PlanAxis x, y;               // what to resample from the decoded image
};

TransformPlan plan_transform(const ImageInfo& info, const TransformSpec& spec, uint64_t sample_seed);

// Throws bt::Error unless the decoder produced the plan's dec_w x dec_h (the plan's regions assume it).
void check_decoded_size(const TransformPlan& plan, int width, int height);

}  // namespace bt::media
