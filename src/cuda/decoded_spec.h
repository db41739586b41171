// The loader's decode-only samples (loader/decoded_batch.h) as kernel specs: the geometry that makes the CUDA
// kernel (and resize_ref) reproduce media::transform_to_u8 for each sample. Header-only dependency on the
// loader's plain structs; no link dependency on bt_loader.
#pragma once
#include <cstdint>
#include <vector>

#include "cuda/resize_plan.h"
#include "loader/decoded_batch.h"

namespace bt::cuda {

SampleSpec spec_of(const loader::DecodedSample& s, int image_size);
// specs[i] / offsets[i] for every sample of `d` (vectors are reused).
void specs_of(const loader::DecodedBatch& d, int image_size, std::vector<SampleSpec>& specs,
              std::vector<uint64_t>& offsets);

}  // namespace bt::cuda
