// CPU reference of the CUDA batch kernel (cuda/batch_resize.h): the same plan, the same integer taps in
// the same order, the same colour jitter (media/color_jitter_math.h, pixel by pixel as kernel 3), the same lookup
// and bf16 rounding, so the GPU output must equal it bit for bit.
// `input` holds plan.input_bytes bytes; `out` receives plan.output_bytes() bytes (NCHW fp32 or bf16).
#pragma once
#include <cstdint>

#include "cuda/resize_plan.h"

namespace bt::cuda {

void reference_run(const BatchPlan& plan, const uint8_t* input, void* out);

// The uint8 HWC image_size^2 result of one sample, colour jitter included, before normalisation (for tests and
// debugging).
void reference_sample_u8(const BatchPlan& plan, size_t sample, const uint8_t* input, uint8_t* out_hwc);

}  // namespace bt::cuda
