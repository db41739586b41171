// The GPU colour stage of nvJPEG decodes: packed RGB HWC uint8 from a JPEG's Y/Cb/Cr planes in device
// memory, with libjpeg-turbo's default fancy chroma upsampling and YCbCr->RGB fixed point (cuda/ycc_math.h),
// so the result equals cuda::reference_ycc_to_rgb and tjDecompress2 byte for byte.
// Enqueues on `stream` only (no host sync); the planes must stay valid until the stream reaches the
// kernels. Each job's planes must satisfy ycc_layout_supported(). CUDA launch errors throw bt::Error.
#pragma once
#include <cstdint>
#include <vector>

#include "cuda/ycc_math.h"

struct CUstream_st;

namespace bt::cuda {

struct YccJob {
  YccPlanes planes;  // device pointers
  uint8_t* rgb_out;  // device: planes.width * planes.height * 3 bytes
};

void ycc_to_rgb_device(CUstream_st* stream, const std::vector<YccJob>& jobs);

}  // namespace bt::cuda
