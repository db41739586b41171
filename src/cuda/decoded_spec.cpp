#include "cuda/decoded_spec.h"

#include "common/error.h"

namespace bt::cuda {

SampleSpec spec_of(const loader::DecodedSample& s, int image_size) {
  if (!s.train) return eval_spec_dct(s.orig_w, s.orig_h, s.dec_w, s.dec_h, s.scale_num, image_size);
  // Only the crop rect was packed: resampling the whole (cropped) image is the same crop() + resize().
  if (s.cropped) return crop_spec(s.width, s.height, 0, 0, s.crop_h, s.crop_w, image_size, s.flip);
  return train_spec_dct(s.orig_w, s.orig_h, s.dec_w, s.dec_h, s.scale_num, s.top, s.left, s.crop_h, s.crop_w,
                        s.flip, image_size);
}

void specs_of(const loader::DecodedBatch& d, int image_size, std::vector<SampleSpec>& specs,
              std::vector<uint64_t>& offsets) {
  specs.clear();
  offsets.clear();
  for (const auto& s : d.samples) {
    if (!s.cropped && (s.width != s.dec_w || s.height != s.dec_h))
      fail("decode-only sample ", specs.size(), ": packed ", s.width, "x", s.height, " but decoded ", s.dec_w, "x",
           s.dec_h);
    specs.push_back(spec_of(s, image_size));
    offsets.push_back(s.offset);
  }
}

}  // namespace bt::cuda
