// The production SampleTransform: bt::media with one MediaScratch per worker.
#include "loader/sample_transform.h"

#include "loader/decode_only.h"
#include "media/image.h"

namespace bt::loader {
namespace {

class MediaTransform final : public SampleTransform {
 public:
  MediaTransform() : scratch_(media::make_scratch()) {}
  void to_u8(std::span<const uint8_t> encoded, const media::TransformSpec& spec, uint64_t seed, uint8_t* out,
             media::TransformTiming* timing) override {
    media::transform_to_u8(encoded, spec, seed, out, *scratch_, timing);
  }
  void normalize(const uint8_t* hwc, const media::TransformSpec& spec, float* chw) override {
    media::normalize_hwc_to_chw(hwc, spec, chw);
  }
  void decode_only(std::span<const uint8_t> encoded, const media::TransformSpec& spec, uint64_t seed,
                   bool ship_device_jpegs, DecodedSample& meta, AlignedBuffer<uint8_t>& out,
                   media::TransformTiming* timing) override {
    decode_for_device(encoded, spec, seed, ship_device_jpegs, decoded_, meta, out, timing);
  }

 private:
  std::unique_ptr<media::MediaScratch> scratch_;
  media::ImageU8 decoded_;  // decode-only mode's output before it is copied out
};

}  // namespace

std::unique_ptr<SampleTransform> make_media_transform() { return std::make_unique<MediaTransform>(); }

}  // namespace bt::loader
