// Host-side planning of the batched crop + resize + flip + normalise (the `Setup` half of the CUDA kernel,
// also used by the CPU reference). Pure C++, no CUDA.
//
// Each sample is a uint8 RGB HWC image inside one packed input buffer (offsets table). Per axis the
// sample's AxisSpec says what the CPU path does: Pillow resamples the source region
// [src_begin, src_begin + src_extent) (a crop; taps are clipped to it) from its box [box0, box1) onto
// out_full pixels, and the outputs [out_begin, out_begin + image_size) are kept (a center crop after the
// resize). make_plan() computes Pillow's fixed-point tables (media::compute_resample_coeffs) for exactly
// those outputs and packs everything into one int32 blob to upload; the kernels (and resize_ref) then do
// a horizontal pass into a uint8 scratch (rows `row0 .. row0 + rows` of the source) and a vertical pass +
// flip + normalise into NCHW. A sample with colour jitter (SampleSpec::jitter, the train plan's factors) is
// jittered between the vertical pass and the normalisation, with media/color_jitter_math.h's arithmetic: the
// contrast step needs the whole image's mean, so such a batch stores the uint8 result first (BatchPlan::jitter).
// Invalid specs or offsets throw bt::Error naming the sample.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "media/color_jitter_math.h"

namespace bt::media {
struct TransformPlan;  // media/plan.h (C++20; this header is also compiled by nvcc as C++17)
}

namespace bt::cuda {

enum class OutputType { kFloat32, kBFloat16 };

struct AxisSpec {
  int src_begin = 0;
  int src_extent = 0;
  double box0 = 0, box1 = 0;
  int out_full = 0;
  int out_begin = 0;
};

struct SampleSpec {
  int width = 0, height = 0;
  AxisSpec x, y;
  bool flip = false;  // horizontal flip of the final image_size^2 output
  media::JitterFactors jitter;  // colour jitter of the uint8 output, after the flip (all 1: none)
};

// The reference eval transform: torchvision Resize(image_size, BICUBIC) on the shortest edge, CenterCrop.
SampleSpec eval_spec(int width, int height, int image_size);
// RandomResizedCrop's result: crop the integer rect (torchvision's i=top, j=left, h, w), resize it to
// image_size^2; then the optional flip. Only the rect is read, so a loader may pack just the cropped
// pixels and pass crop_spec(crop_w, crop_h, 0, 0, crop_h, crop_w, ...): same output, fewer bytes uploaded.
// Sizes are those of the DECODED image (after any DCT-domain downscale), as for the other specs.
SampleSpec crop_spec(int width, int height, int top, int left, int crop_h, int crop_w, int image_size,
                     bool flip);
// The exact geometry of media::transform_to_u8: the sample's media plan (media/plan.h) as a kernel spec over
// its decoded image, or with `cropped` over just the plan's crop rect (a loader packed only those pixels).
SampleSpec spec_of(const media::TransformPlan& plan, bool cropped = false);
// Pillow's Image.resize(size, box=(x0, y0, x1, y1)) of the whole image with a float box.
SampleSpec box_spec(int width, int height, double x0, double y0, double x1, double y1, int image_size,
                    bool flip);

// One sample as the kernels see it (POD, uploaded as is). Offsets into the coefficient blob are in int32
// units: bounds at *_coef (image_size pairs {first, count}, first already absolute in the source),
// weights at *_coef + 2 * image_size (image_size * *_taps).
struct SamplePlan {
  uint64_t in_offset;       // bytes into the input buffer
  uint64_t scratch_offset;  // bytes into the scratch (rows * image_size * 3)
  int32_t width, height;
  int32_t x_taps, y_taps;
  uint32_t x_coef, y_coef;
  int32_t row0, rows;  // source rows the vertical pass reads
  int32_t flip;
  media::JitterFactors jitter;
};

struct BatchPlan {
  int image_size = 0;
  OutputType type = OutputType::kFloat32;
  std::vector<SamplePlan> samples;
  std::vector<int32_t> coef;   // the blob
  float lut[3][256] = {};      // normalised value of each uint8 level per channel
  size_t input_bytes = 0;      // bytes the input buffer must hold
  size_t scratch_bytes = 0;    // total uint8 scratch
  int max_rows = 0;            // largest `rows` (grid size of the horizontal pass)
  bool jitter = false;         // some sample has colour jitter: the kernels take the uint8 detour
  size_t output_bytes() const;  // batch * 3 * image_size^2 * element size
};

// offsets[i] is the byte offset of sample i's width*height*3 bytes in a buffer of input_bytes bytes.
// mean/std default to CLIP's (media/transform.h).
BatchPlan make_plan(const std::vector<SampleSpec>& specs, const std::vector<uint64_t>& offsets,
                    size_t input_bytes, int image_size, OutputType type, const float* mean = nullptr,
                    const float* std = nullptr);

// The normalisation both sides use: (v / 255 - mean) / std in float.
float normalize_level(int v, float mean, float std);

}  // namespace bt::cuda
