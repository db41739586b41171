#include "loader/decoded_batch.h"

#include <cstring>

#include "common/error.h"
#include "loader/sample_transform.h"

namespace bt::loader {

void pack_decoded(DecodedBatch& d) {
  constexpr uint64_t kAlign = 64;
  if (d.staging.size() < d.samples.size()) fail("loader: decode-only batch has fewer images than samples");
  uint64_t at = 0;
  for (size_t i = 0; i < d.samples.size(); ++i) {
    d.samples[i].offset = at;
    at += (d.staging[i].size() + kAlign - 1) / kAlign * kAlign;
  }
  d.bytes = static_cast<size_t>(at);
  d.packed.resize(d.bytes);
  for (size_t i = 0; i < d.samples.size(); ++i)
    if (!d.staging[i].empty()) std::memcpy(d.packed.data() + d.samples[i].offset, d.staging[i].data(), d.staging[i].size());
}

void SampleTransform::decode_only(std::span<const uint8_t>, const media::TransformSpec&, uint64_t, bool, DecodedSample&,
                                  AlignedBuffer<uint8_t>&, media::TransformTiming*) {
  fail("loader: this sample transform has no decode-only mode (LoaderOptions::output_decoded)");
}

}  // namespace bt::loader
