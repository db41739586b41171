// The train transform's colour jitter on the CPU: drawing one sample's factors (torchvision's ColorJitter.get_params
// without hue, from the sample's generator) and applying them to its uint8 HWC output after resize + crop + flip.
// The per-pixel arithmetic, the fixed order (brightness, contrast, saturation) and how it follows torchvision are
// in media/color_jitter_math.h, which the CUDA kernel shares.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "media/color_jitter_math.h"
#include "media/random_crop.h"

namespace bt::media {

// strength = {brightness, contrast, saturation} as ColorJitter's arguments: each x > 0 draws its factor uniformly
// from [max(0, 1 - x), 1 + x], in that order; x == 0 draws nothing and leaves the factor at 1.
JitterFactors draw_color_jitter(const std::array<double, 3>& strength, SampleRng& rng);

// `pixels` RGB pixels in place: per-level tables of the shared operations, so the same results as jitter_pixel on
// each pixel (with the mean of jitter_mean_term) at a few table lookups a pixel.
void apply_color_jitter(uint8_t* hwc, size_t pixels, const JitterFactors& f);

}  // namespace bt::media
