// Loader throughput with and without the GPU media path, images RAM-resident (no disk), batch 48:
//   cpu: T threads run media::transform_to_u8 (DCT-scaled decode + Pillow resize + crop) + normalise to
//        fp32 NCHW in host memory (what the CPU loader hands the trainer);
//   gpu: T threads only DCT-scale-decode into one pinned buffer; BatchResize does resize + crop + flip +
//        normalise to bf16 on the device (upload included, ends with the batch on the GPU).
// Each image is processed exactly as the CPU path would (same geometry: media/plan.h through cuda::spec_of), so the
// GPU variant is the same work minus the resampling on the host. One JSON line per (path, threads).
//
//   bench_gpu_pipeline --data DIR [--threads 1,2,8,16] [--batch 48] [--size 294] [--batches 20] [--mode train|eval]
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "cuda/batch_resize.h"
#include "media/decode.h"
#include "media/plan.h"
#include "media/transform.h"

using namespace bt;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string data;
  std::vector<int> threads = {1, 2, 8, 16};
  int batch = 48, size = 294, batches = 20;
  bool train = true;
};

template <class F>
void parallel(int threads, int n, F&& f) {  // f(thread, item) over items [0, n)
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i; (i = next.fetch_add(1)) < n;) f(t, i);
    });
  for (auto& th : pool) th.join();
}

}  // namespace

int main(int argc, char** argv) try {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--data") a.data = v;
    else if (k == "--threads") {
      a.threads.clear();
      std::stringstream ss(v);
      for (std::string t; std::getline(ss, t, ',');) a.threads.push_back(std::stoi(t));
    } else if (k == "--batch") a.batch = std::stoi(v);
    else if (k == "--size") a.size = std::stoi(v);
    else if (k == "--batches") a.batches = std::stoi(v);
    else if (k == "--mode") a.train = v == "train";
    else fail("unknown flag ", k);
  }
  if (a.data.empty()) fail("--data DIR (a folder of .jpg files, searched recursively) is required");
  std::vector<std::vector<uint8_t>> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(a.data))
    if (e.is_regular_file() && e.path().extension() == ".jpg" && files.size() < 2000) {
      std::ifstream f(e.path(), std::ios::binary);
      files.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
  if (files.empty()) fail("--data ", a.data, ": no .jpg files");
  const int B = a.batch, S = a.size;
  media::TransformSpec spec;
  spec.image_size = S;
  spec.mode = a.train ? media::TransformMode::kTrain : media::TransformMode::kEval;
  std::string why;
  const bool gpu = cuda::cuda_device_available(&why);

  for (int T : a.threads) {
    // CPU path.
    {
      std::vector<std::unique_ptr<media::MediaScratch>> scratch;
      for (int t = 0; t < T; ++t) scratch.push_back(media::make_scratch());
      std::vector<std::vector<uint8_t>> hwc(T, std::vector<uint8_t>(size_t(S) * S * 3));
      std::vector<float> out(size_t(B) * 3 * S * S);
      const auto t0 = Clock::now();
      for (int b = 0; b < a.batches; ++b)
        parallel(T, B, [&](int t, int i) {
          const size_t idx = (size_t(b) * B + i) % files.size();
          media::transform_to_u8(files[idx], spec, idx + 1, hwc[t].data(), *scratch[t]);
          media::normalize_hwc_to_chw(hwc[t].data(), S, S, out.data() + size_t(i) * 3 * S * S);
        });
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      std::printf("{\"bench\":\"gpu_pipeline\",\"path\":\"cpu\",\"threads\":%d,\"batch\":%d,\"size\":%d,\"mode\":\"%s\","
                  "\"samples_per_s\":%.1f}\n", T, B, S, a.train ? "train" : "eval", a.batches * B / s);
      std::fflush(stdout);
    }
    if (!gpu) {
      std::printf("{\"bench\":\"gpu_pipeline\",\"path\":\"gpu\",\"threads\":%d,\"skipped\":\"%s\"}\n", T, why.c_str());
      continue;
    }
    // GPU path.
    cudaStream_t st;
    if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess) fail("cudaStreamCreate failed");
    cuda::BatchResize k;
    cuda::PinnedBuffer pinned;
    std::vector<media::ImageU8> dec(T);
    std::vector<cuda::SampleSpec> specs(B);
    std::vector<uint64_t> offsets(B);
    std::vector<media::TransformPlan> plans(B);
    cuda::DeviceBuffer out(size_t(B) * 3 * S * S * 2);
    double host_s = 0;
    const auto t0 = Clock::now();
    for (int b = 0; b < a.batches; ++b) {
      const auto h0 = Clock::now();
      // Header pass: geometry and decoded sizes -> offsets in the packed buffer.
      size_t total = 0;
      for (int i = 0; i < B; ++i) {
        const size_t idx = (size_t(b) * B + i) % files.size();
        // The media plan the CPU path follows (train crops drawn from seed idx + 1).
        plans[i] = media::plan_transform(media::probe_image(files[idx], spec.max_image_pixels), spec, idx + 1);
        specs[i] = cuda::spec_of(plans[i]);
        const int dw = plans[i].dec_w, dh = plans[i].dec_h;
        offsets[i] = total;
        total += size_t(dw) * dh * 3;
      }
      k.Synchronize();  // the previous batch's upload must be done before we overwrite the pinned buffer
      uint8_t* dst = pinned.reserve(total);
      parallel(T, B, [&](int t, int i) {
        const size_t idx = (size_t(b) * B + i) % files.size();
        media::decode_rgb8(files[idx], spec.max_image_pixels, dec[t], plans[i].scale_num);
        std::memcpy(dst + offsets[i], dec[t].pixels.data(), size_t(dec[t].width) * dec[t].height * 3);
      });
      k.Setup(specs, offsets, total, S, cuda::OutputType::kBFloat16);
      host_s += std::chrono::duration<double>(Clock::now() - h0).count();
      k.Run(st, pinned.data(), out.get());
    }
    k.Synchronize();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("{\"bench\":\"gpu_pipeline\",\"path\":\"gpu\",\"threads\":%d,\"batch\":%d,\"size\":%d,\"mode\":\"%s\","
                "\"samples_per_s\":%.1f,\"host_share\":%.2f}\n", T, B, S, a.train ? "train" : "eval", a.batches * B / s,
                host_s / s);
    std::fflush(stdout);
    cudaStreamDestroy(st);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
