// bench_media: what each step of the per-image media path costs, on a New-Yorker-like 736x699 JPEG (the
// generated data's average size) and on the committed golden cartoon.
//   build-media/bench/media/bench_media --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
// Question answered: do resize + crop + normalize cost well under half of the decode (the loader's goal)?
#include <benchmark/benchmark.h>
#include <hwy/targets.h>
#include <turbojpeg.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "media/decode.h"
#include "media/resize.h"
#include "media/transform.h"

namespace {
using namespace bt::media;

// A cartoon-like image: off-white paper with grain, dark strokes; JPEG q90 4:2:0 (the synth's settings).
std::vector<uint8_t> make_jpeg(int w, int h) {
  std::vector<uint8_t> rgb(size_t(w) * h * 3);
  std::mt19937 rng(1);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int v = 240 + int(rng() % 9) - 4;
      const double d = std::hypot(x - w / 2.0, y - h / 2.0);
      if (std::fabs(d - h / 3.0) < 2.5 || (x + 2 * y) % 97 < 2) v = 30;
      uint8_t* p = &rgb[(size_t(y) * w + x) * 3];
      p[0] = uint8_t(v), p[1] = uint8_t(v - 4), p[2] = uint8_t(v - 12 < 0 ? 0 : v - 12);
    }
  tjhandle tj = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  tjCompress2(tj, rgb.data(), w, w * 3, h, TJPF_RGB, &buf, &size, TJSAMP_420, 90, 0);
  std::vector<uint8_t> out(buf, buf + size);
  tjFree(buf);
  tjDestroy(tj);
  return out;
}

const std::vector<uint8_t>& jpeg() {
  static const std::vector<uint8_t> j = make_jpeg(736, 699);
  return j;
}

const std::vector<uint8_t>& golden_jpeg() {
  static const std::vector<uint8_t> j = [] {
    std::ifstream f(std::string(BT_MEDIA_GOLDEN_DIR) + "/cartoon_736x699.jpg", std::ios::binary);
    return std::vector<uint8_t>{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }();
  return j;
}

void BM_DecodeFull(benchmark::State& st) {
  ImageU8 img;
  for (auto _ : st) decode_rgb8(jpeg(), kDefaultMaxImagePixels, img, 8);
  st.SetLabel("736x699 -> 736x699, " + std::to_string(jpeg().size() / 1024) + " KB");
}
BENCHMARK(BM_DecodeFull)->Unit(benchmark::kMicrosecond);

void BM_DecodeScaled(benchmark::State& st) {
  ImageU8 img;
  const int k = int(st.range(0));
  for (auto _ : st) decode_rgb8(jpeg(), kDefaultMaxImagePixels, img, k);
  st.SetLabel("scale " + std::to_string(k) + "/8 -> " + std::to_string(img.width) + "x" + std::to_string(img.height));
}
BENCHMARK(BM_DecodeScaled)->Arg(4)->Arg(2)->Unit(benchmark::kMicrosecond);

// The eval geometry: 736x699 -> 303x288, only the 288x288 center window computed.
void BM_ResizeEvalCrop(benchmark::State& st) {
  ImageU8 img;
  decode_rgb8(jpeg(), kDefaultMaxImagePixels, img, 8);
  ResizeScratch rs;
  std::vector<uint8_t> out(288 * 288 * 3);
  for (auto _ : st)
    resize_rgb8(img.pixels.data(), img.width, img.height, img.stride(), Box{0, 0, 736, 699}, 303, 288,
                Window{8, 0, 288, 288}, out.data(), 288 * 3, rs);
}
BENCHMARK(BM_ResizeEvalCrop)->Unit(benchmark::kMicrosecond);

// What Pillow does in the peer (~4 ms there): the full 303x288 resize.
void BM_ResizeFull(benchmark::State& st) {
  ImageU8 img;
  decode_rgb8(jpeg(), kDefaultMaxImagePixels, img, 8);
  ResizeScratch rs;
  std::vector<uint8_t> out(303 * 288 * 3);
  for (auto _ : st) resize_rgb8(img.pixels.data(), img.width, img.height, 303, 288, out.data(), rs);
}
BENCHMARK(BM_ResizeFull)->Unit(benchmark::kMicrosecond);

// The same eval resize with Highway restricted to one target: shows what the vectorisation buys
// (EMU128 = portable scalar-ish fallback, SSE4 = 4 lanes, AVX2 = 8, AVX3 = AVX-512, 16 lanes).
void BM_ResizeEvalCropTarget(benchmark::State& st) {
  const int64_t target = st.range(0);
  if ((hwy::SupportedTargets() & target) == 0) {
    st.SkipWithError("target not supported on this CPU");
    return;
  }
  hwy::SetSupportedTargetsForTest(target);
  ImageU8 img;
  decode_rgb8(jpeg(), kDefaultMaxImagePixels, img, 8);
  ResizeScratch rs;
  std::vector<uint8_t> out(288 * 288 * 3);
  for (auto _ : st)
    resize_rgb8(img.pixels.data(), img.width, img.height, img.stride(), Box{0, 0, 736, 699}, 303, 288,
                Window{8, 0, 288, 288}, out.data(), 288 * 3, rs);
  st.SetLabel(hwy::TargetName(target));
  hwy::SetSupportedTargetsForTest(0);
}
BENCHMARK(BM_ResizeEvalCropTarget)->Arg(HWY_EMU128)->Arg(HWY_SSE4)->Arg(HWY_AVX2)->Arg(HWY_AVX3)
    ->Unit(benchmark::kMicrosecond);

void BM_ResizeFromHalfScale(benchmark::State& st) {
  ImageU8 img;
  decode_rgb8(jpeg(), kDefaultMaxImagePixels, img, 4);
  ResizeScratch rs;
  std::vector<uint8_t> out(288 * 288 * 3);
  for (auto _ : st)
    resize_rgb8(img.pixels.data(), img.width, img.height, img.stride(), Box{0, 0, 368, 349.5}, 303, 288,
                Window{8, 0, 288, 288}, out.data(), 288 * 3, rs);
}
BENCHMARK(BM_ResizeFromHalfScale)->Unit(benchmark::kMicrosecond);

void BM_Normalize(benchmark::State& st) {
  std::vector<uint8_t> hwc(288 * 288 * 3, 128);
  std::vector<float> chw(hwc.size());
  for (auto _ : st) {
    normalize_hwc_to_chw(hwc.data(), 288, 288, chw.data());
    benchmark::DoNotOptimize(chw.data());
  }
}
BENCHMARK(BM_Normalize)->Unit(benchmark::kMicrosecond);

// Is normalize at memory speed? Arg 0: normalize into the slots of a 32-image batch, as the loader does;
// arg 1: only write the same floats (std::fill), the memory-bandwidth floor. (A 3 x 256 lookup table
// instead of the two divisions measured 1.9x slower with AVX-512 gathers, 3.2x scalar: 2026-12-04.)
void BM_NormalizeIntoBatch(benchmark::State& st) {
  std::vector<uint8_t> hwc(288 * 288 * 3);
  for (size_t i = 0; i < hwc.size(); ++i) hwc[i] = static_cast<uint8_t>(i * 131 + (i >> 7));
  const size_t px = hwc.size();
  std::vector<float> batch(32 * px, 1.0f);
  size_t j = 0;
  for (auto _ : st) {
    float* dst = batch.data() + (j++ % 32) * px;
    if (st.range(0)) std::fill(dst, dst + px, static_cast<float>(j));
    else normalize_hwc_to_chw(hwc.data(), 288, 288, dst);
    benchmark::DoNotOptimize(dst);
  }
  st.SetLabel(st.range(0) ? "write only" : "normalize");
}
BENCHMARK(BM_NormalizeIntoBatch)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Whole per-sample path (decode + resize + crop), eval and train, DCT scaling off/on.
void BM_Transform(benchmark::State& st) {
  TransformSpec spec;
  spec.mode = st.range(0) ? TransformMode::kTrain : TransformMode::kEval;
  spec.dct_scaling = st.range(1) != 0;
  auto scratch = make_scratch();
  std::vector<uint8_t> out(288 * 288 * 3);
  TransformTiming t, sum;
  uint64_t seed = 0;
  for (auto _ : st) {
    transform_to_u8(st.range(2) ? golden_jpeg() : jpeg(), spec, seed++, out.data(), *scratch, &t);
    sum.decode_s += t.decode_s;
    sum.transform_s += t.transform_s;
  }
  st.counters["decode_ms"] = benchmark::Counter(sum.decode_s * 1e3 / st.iterations());
  st.counters["resize_ms"] = benchmark::Counter(sum.transform_s * 1e3 / st.iterations());
  st.SetLabel(std::string(spec.mode == TransformMode::kTrain ? "train" : "eval") + (spec.dct_scaling ? " dct" : "") +
              (st.range(2) ? " golden" : " synth"));
}
BENCHMARK(BM_Transform)->Args({0, 0, 0})->Args({0, 1, 0})->Args({1, 0, 0})->Args({1, 1, 0})->Args({0, 0, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
