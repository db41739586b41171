// Decode-only samples (loader/decoded_batch.h's DecodedSample: offset, width, height, cropped, plan) as kernel
// specs: spec_of(plan) makes the CUDA kernel (and resize_ref) reproduce media::transform_to_u8 for each sample.
// A template over the sample type, so this module depends on media/ only, not on the loader.
#pragma once
#include <cstdint>
#include <vector>

#include "common/error.h"
#include "cuda/resize_plan.h"

namespace bt::cuda {

// specs[i] / offsets[i] for every sample (vectors are reused). Throws if a whole-image sample's packed size is
// not its decoded size.
template <class Samples>
void specs_of(const Samples& samples, std::vector<SampleSpec>& specs, std::vector<uint64_t>& offsets) {
  specs.clear();
  offsets.clear();
  for (const auto& s : samples) {
    if (!s.cropped && (s.width != s.plan.dec_w || s.height != s.plan.dec_h))
      fail("decode-only sample ", specs.size(), ": packed ", s.width, "x", s.height, " but decoded ", s.plan.dec_w,
           "x", s.plan.dec_h);
    specs.push_back(spec_of(s.plan, s.cropped));
    offsets.push_back(s.offset);
  }
}

}  // namespace bt::cuda
