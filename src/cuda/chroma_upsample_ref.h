// CPU reference of the GPU JPEG colour stage (cuda/ycc_convert.h): packed RGB (width*height*3 bytes, HWC)
// from a JPEG's Y/Cb/Cr planes as libjpeg-turbo's default decode makes it (fancy chroma upsampling, then
// ycc_rgb_convert), i.e. byte for byte what tjDecompress2(..., TJPF_RGB, 0) returns for the same planes.
// Layouts: 4:4:4, 4:2:2, 4:2:0, 4:4:0 (factors 1 or 2); anything else throws bt::Error.
#pragma once
#include <cstdint>

#include "cuda/ycc_math.h"

namespace bt::cuda {

// True for the sampling layouts ycc_math.h reproduces, with plane sizes consistent with the image size.
bool ycc_layout_supported(const YccPlanes& p);

void reference_ycc_to_rgb(const YccPlanes& p, uint8_t* rgb_out);

}  // namespace bt::cuda
