#include "cuda/chroma_upsample_ref.h"

#include "common/error.h"

namespace bt::cuda {

bool ycc_layout_supported(const YccPlanes& p) {
  const auto factor_ok = [](int f) { return f == 1 || f == 2; };
  return factor_ok(p.h_factor) && factor_ok(p.v_factor) && p.width > 0 && p.height > 0 &&
         p.chroma_w == (p.width + p.h_factor - 1) / p.h_factor &&
         p.chroma_h == (p.height + p.v_factor - 1) / p.v_factor && p.y_pitch >= p.width && p.c_pitch >= p.chroma_w;
}

void reference_ycc_to_rgb(const YccPlanes& p, uint8_t* rgb_out) {
  if (!ycc_layout_supported(p))
    fail("ycc reference: unsupported planes (", p.width, "x", p.height, ", chroma ", p.chroma_w, "x", p.chroma_h,
         ", factors ", p.h_factor, "x", p.v_factor, ")");
  for (int y = 0; y < p.height; ++y)
    for (int x = 0; x < p.width; ++x) ycc_pixel(p, x, y, rgb_out + (static_cast<size_t>(y) * p.width + x) * 3);
}

}  // namespace bt::cuda
