// Decode-only samples (loader/decoded_batch.h's DecodedSample: offset, width, height, cropped, encoded, plan) as
// kernel specs: spec_of(plan) makes the CUDA kernel (and resize_ref) reproduce media::transform_to_u8 for each
// sample. A template over the sample type, so this module depends on media/ only, not on the loader.
#pragma once
#include <algorithm>
#include <cstddef>
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
    if (s.encoded) fail("decode-only sample ", specs.size(), " is an encoded JPEG: use layout_of (a device decodes it)");
    specs.push_back(spec_of(s.plan, s.cropped));
    offsets.push_back(s.offset);
  }
}

// Where a batch's pixels live on the device. The upload is ONE copy of a prefix of the loader's packed host buffer
// (CPU-decoded samples keep their packed offsets); the JPEGs of encoded samples are decoded on the device into a
// region after that prefix (64-byte aligned, width * height * 3 each). The kernel then reads every sample from
// `offsets`. An all-encoded batch uploads nothing but the JPEG bytes nvJPEG reads from the host itself.
struct DeviceLayout {
  std::vector<SampleSpec> specs;     // [B]
  std::vector<uint64_t> offsets;     // [B] device input offset of each sample's pixels
  size_t upload_bytes = 0;           // prefix of the packed host buffer to copy to the device input
  size_t input_bytes = 0;            // device input size: the prefix + the decode region
  std::vector<uint32_t> jpegs;       // samples the device decodes, in batch order
  std::vector<uint64_t> jpeg_at;     // [jpegs] host offset of the compressed bytes in the packed buffer
  std::vector<uint64_t> jpeg_bytes;  // [jpegs] their length
};

template <class Samples>
void layout_of(const Samples& samples, DeviceLayout& l) {
  constexpr uint64_t kAlign = 64;
  l.specs.clear(), l.offsets.clear(), l.jpegs.clear(), l.jpeg_at.clear(), l.jpeg_bytes.clear();  // keep capacity
  l.upload_bytes = l.input_bytes = 0;
  for (const auto& s : samples)
    if (!s.encoded)
      l.upload_bytes = std::max<size_t>(l.upload_bytes, s.offset + static_cast<uint64_t>(s.width) * s.height * 3);
  uint64_t at = (l.upload_bytes + kAlign - 1) / kAlign * kAlign;
  for (const auto& s : samples) {
    const size_t i = l.specs.size();
    if (!s.cropped && (s.width != s.plan.dec_w || s.height != s.plan.dec_h))
      fail("decode-only sample ", i, ": packed ", s.width, "x", s.height, " but decoded ", s.plan.dec_w, "x",
           s.plan.dec_h);
    if (s.encoded && (s.cropped || s.plan.scale_num != 8))
      fail("decode-only sample ", i, ": an encoded JPEG must be planned whole at full scale");
    l.specs.push_back(spec_of(s.plan, s.cropped));
    if (!s.encoded) {
      l.offsets.push_back(s.offset);
      continue;
    }
    l.offsets.push_back(at);
    l.jpegs.push_back(static_cast<uint32_t>(i));
    l.jpeg_at.push_back(s.offset);
    l.jpeg_bytes.push_back(s.encoded_bytes);
    at += (static_cast<uint64_t>(s.width) * s.height * 3 + kAlign - 1) / kAlign * kAlign;
  }
  l.input_bytes = static_cast<size_t>(at);
}

}  // namespace bt::cuda
