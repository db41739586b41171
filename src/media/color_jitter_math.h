// Colour jitter of uint8 RGB pixels (torchvision's ColorJitter without hue), shared by the CPU transform
// (media/color_jitter.h) and the CUDA kernel (cuda/batch_resize.cu), so both run the very same float32 operations
// in the same order and agree bit for bit. Plain C++17 (nvcc compiles it too); no state, no allocation.
//
// The arithmetic is torchvision's tensor functional on a uint8 image (transforms/_functional_tensor.py), factor f:
//   blend(a, b, f) = uint8(clamp(f * a + (1 - f) * b, 0, 255))   float32 products and sum; the cast truncates
//   gray(r, g, b)  = uint8(0.2989 * r + 0.587 * g + 0.114 * b)     rgb_to_grayscale, truncated
//   brightness     blend(x, 0, f)            = uint8(min(f * x, 255))
//   contrast       blend(x, mean, f)         mean: of gray over the whole image, as it is at that point
//   saturation     blend(x, gray(pixel), f)
// applied in the FIXED order brightness, contrast, saturation (torchvision applies its four in a random order per
// sample; hue is not offered). A factor of exactly 1 is the identity (1 * x + 0 * b == x) and is skipped. The
// contrast mean is the exact integer sum of the grays over the pixel count, rounded once to float (torch's float32
// reduction may differ from it in the last bit).
//
// Why the helpers: a compiler may fuse a * b + c into one FMA, which rounds once instead of twice. nvcc does so by
// default, hence __fmul_rn / __fadd_rn on the device (never fused); host files using this header are compiled with
// -ffp-contract=off (src/media/CMakeLists.txt, src/cuda/CMakeLists.txt) for builds that enable FMA (BT_NATIVE).
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define BT_JITTER_HD __host__ __device__ __forceinline__
#else
#define BT_JITTER_HD inline
#endif

namespace bt::media {

// One sample's drawn factors; 1 switches that adjustment off. POD: the CUDA plan uploads it as is.
struct JitterFactors {
  float brightness = 1.0f, contrast = 1.0f, saturation = 1.0f;
};

BT_JITTER_HD bool jitter_any(const JitterFactors& f) {
  return f.brightness != 1.0f || f.contrast != 1.0f || f.saturation != 1.0f;
}

BT_JITTER_HD float jitter_mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

BT_JITTER_HD float jitter_add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// clamp(v, 0, 255) then torch's float -> uint8 cast (truncation); a NaN gives 0.
BT_JITTER_HD uint8_t jitter_u8(float v) {
  return v > 0.0f ? static_cast<uint8_t>(static_cast<int>(v < 255.0f ? v : 255.0f)) : uint8_t{0};
}

// torch's (1.0 - ratio): computed in double (a Python float), then float32 in the tensor op.
BT_JITTER_HD float jitter_rest(float f) { return static_cast<float>(1.0 - static_cast<double>(f)); }

// _blend(a, b, f) with rest = jitter_rest(f).
BT_JITTER_HD uint8_t jitter_blend(float f, float rest, uint8_t a, float b) {
  return jitter_u8(jitter_add(jitter_mul(f, static_cast<float>(a)), jitter_mul(rest, b)));
}

// rgb_to_grayscale as the sum of its three products (each a function of one level, so a CPU may tabulate them).
BT_JITTER_HD float jitter_gray_r(uint8_t r) { return jitter_mul(0.2989f, static_cast<float>(r)); }
BT_JITTER_HD float jitter_gray_g(uint8_t g) { return jitter_mul(0.587f, static_cast<float>(g)); }
BT_JITTER_HD float jitter_gray_b(uint8_t b) { return jitter_mul(0.114f, static_cast<float>(b)); }
BT_JITTER_HD uint8_t jitter_gray_sum(float r, float g, float b) {
  return static_cast<uint8_t>(static_cast<int>(jitter_add(jitter_add(r, g), b)));  // < 255: weights sum to 0.9999
}
BT_JITTER_HD uint8_t jitter_gray(uint8_t r, uint8_t g, uint8_t b) {
  return jitter_gray_sum(jitter_gray_r(r), jitter_gray_g(g), jitter_gray_b(b));
}

// blend(x, 0, f): (1 - f) * 0 is +-0, which leaves f * x unchanged.
BT_JITTER_HD uint8_t jitter_brightness(float f, uint8_t x) { return jitter_u8(jitter_mul(f, static_cast<float>(x))); }

BT_JITTER_HD float jitter_mean(uint64_t gray_sum, uint64_t pixels) {
  return static_cast<float>(static_cast<double>(gray_sum) / static_cast<double>(pixels));
}

// One pixel's term of the contrast mean: its gray after the brightness step.
BT_JITTER_HD uint32_t jitter_mean_term(const JitterFactors& f, const uint8_t* px) {
  if (f.brightness == 1.0f) return jitter_gray(px[0], px[1], px[2]);
  return jitter_gray(jitter_brightness(f.brightness, px[0]), jitter_brightness(f.brightness, px[1]),
                     jitter_brightness(f.brightness, px[2]));
}

// All three steps on one pixel in place; `mean` = jitter_mean of the image's jitter_mean_term sum (unused when
// contrast is 1). The CPU tabulates the same operations per level (media/color_jitter.cpp).
BT_JITTER_HD void jitter_pixel(const JitterFactors& f, float mean, uint8_t* px) {
  if (f.brightness != 1.0f)
    for (int c = 0; c < 3; ++c) px[c] = jitter_brightness(f.brightness, px[c]);
  if (f.contrast != 1.0f) {
    const float rest = jitter_rest(f.contrast);
    for (int c = 0; c < 3; ++c) px[c] = jitter_blend(f.contrast, rest, px[c], mean);
  }
  if (f.saturation != 1.0f) {
    const float rest = jitter_rest(f.saturation), g = static_cast<float>(jitter_gray(px[0], px[1], px[2]));
    for (int c = 0; c < 3; ++c) px[c] = jitter_blend(f.saturation, rest, px[c], g);
  }
}

}  // namespace bt::media
