// The real bt::loader::Loader with and without the GPU media path, on a captions dataset (images read from
// disk/page cache), batch B at image size S:
//   cpu:          the normal loader (decode + Pillow resize + crop + normalise to fp32 NCHW in the workers);
//   decode_only:  the loader's decode-only mode alone (DCT-scaled decode + pack, what workers do for the GPU);
//   encoded:      the loader's encoded mode alone (--media_decode gpu: baseline JPEGs shipped compressed, the
//                 rest decoded; what workers do when nvJPEG decodes). Runs on any machine.
//   gpu:          decode-only + cuda::DecodeResize to bf16 NCHW on the device (pinned upload included; the
//                 timing ends when the last batch is on the GPU). Skipped without a CUDA device.
//   nvjpeg:       encoded + cuda::DecodeResize with nvJPEG decoding the shipped JPEGs. Skipped without nvJPEG.
// One JSON line per (path, workers).
//   bench_loader_gpu --data DIR|captions.jsonl [--workers 0,1,2,8] [--batch 48] [--size 294] [--batches 20]
//                    [--mode train|eval]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "cuda/batch_resize.h"
#include "cuda/decode_resize.h"
#include "cuda/nvjpeg_decoder.h"
#include "cuda/decoded_spec.h"
#include "data/captions_dataset.h"
#include "loader/loader.h"

using namespace bt;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) try {
  std::string data;
  std::vector<int> workers = {0, 1, 2, 8};
  int B = 48, S = 294, batches = 20;
  bool train = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--data") data = v;
    else if (k == "--workers") {
      workers.clear();
      std::stringstream ss(v);
      for (std::string t; std::getline(ss, t, ',');) workers.push_back(std::stoi(t));
    } else if (k == "--batch") B = std::stoi(v);
    else if (k == "--size") S = std::stoi(v);
    else if (k == "--batches") batches = std::stoi(v);
    else if (k == "--mode") train = v == "train";
    else fail("unknown flag ", k, " (see the header of bench/cuda/bench_loader_gpu.cpp)");
  }
  if (data.empty()) fail("--data DIR (with captions.jsonl) is required");
  std::shared_ptr<const data::Dataset> ds(data::open_dataset(data));
  std::string why;
  const bool gpu = cuda::cuda_device_available(&why);
  const char* mode = train ? "train" : "eval";
  std::unique_ptr<cuda::NvjpegDecoder> jpeg;
  std::string jpeg_why = why;
  if (gpu) jpeg = cuda::NvjpegDecoder::create(&jpeg_why);
  for (int w : workers) {
    for (const char* path : {"cpu", "decode_only", "encoded", "gpu", "nvjpeg"}) {
      const bool dec = std::strcmp(path, "cpu") != 0;
      const bool ship = !std::strcmp(path, "encoded") || !std::strcmp(path, "nvjpeg");
      const bool on_gpu = !std::strcmp(path, "gpu") || !std::strcmp(path, "nvjpeg");
      if (on_gpu && (!gpu || (ship && !jpeg))) {
        std::printf("{\"bench\":\"loader_gpu\",\"path\":\"%s\",\"workers\":%d,\"skipped\":\"%s\"}\n", path, w,
                    (ship ? jpeg_why : why).c_str());
        continue;
      }
      loader::LoaderOptions o;
      o.num_workers = w;
      o.batch_size = B;
      o.transform.image_size = S;
      o.transform.mode = train ? media::TransformMode::kTrain : media::TransformMode::kEval;
      o.decoded_cache_mb = 0;
      o.output_decoded = dec;
      o.ship_device_jpegs = ship;
      if (on_gpu) o.packed_allocator = &cuda::pinned_host_allocator();  // packed where the device copies from
      o.sampler.shuffle = true;
      loader::Loader l(ds, o);
      struct Gpu {  // only built with a device (the CUDA objects need one)
        explicit Gpu(cuda::NvjpegDecoder* j) : k{cuda::DecodeResize(j), cuda::DecodeResize(j)} {}
        cuda::DecodeResize k[2];
        cuda::DeviceLayout layout[2];
        loader::BatchPtr held[2];  // the device reads a batch's bytes until its Run completed
        cuda::DeviceBuffer out;
      };
      std::unique_ptr<Gpu> g;
      if (on_gpu) g = std::make_unique<Gpu>(ship ? jpeg.get() : nullptr), g->out.resize(size_t(B) * 3 * S * S * 2);
      size_t n = 0, bytes = 0, shipped = 0;
      uint64_t epoch = 0;
      l.start_epoch(epoch);
      auto t0 = Clock::now();
      for (int b = -2; b < batches; ++b) {  // two warm-up batches (thread start, first allocations)
        if (b == 0) t0 = Clock::now(), n = 0, bytes = 0, shipped = 0;
        auto batch = l.next();
        if (!batch) {
          l.start_epoch(++epoch);
          batch = l.next();
          if (!batch) fail("--data ", data, ": fewer rows than one batch");
        }
        n += static_cast<size_t>(batch->size);
        bytes += batch->decoded.bytes;
        for (const auto& smp : batch->decoded.samples) shipped += smp.encoded;
        if (on_gpu) {
          const int s = (b + 2) % 2;  // two slots: fill one while the other runs
          g->k[s].Synchronize();      // its previous batch (two back) is no longer read
          g->held[s].reset();
          cuda::layout_of(batch->decoded.samples, g->layout[s]);
          g->k[s].Run(nullptr, g->layout[s], batch->decoded.packed.data(), S, cuda::OutputType::kBFloat16, nullptr,
                      nullptr, g->out.get());
          g->held[s] = std::move(batch);
        }
      }
      if (g) g->k[0].Synchronize(), g->k[1].Synchronize();
      const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
      std::printf("{\"bench\":\"loader_gpu\",\"path\":\"%s\",\"workers\":%d,\"batch\":%d,\"size\":%d,\"mode\":\"%s\","
                  "\"samples_per_s\":%.1f,\"packed_mb_per_batch\":%.2f,\"shipped_jpegs\":%.3f}\n", path, w, B, S,
                  mode, n / secs, dec ? bytes / 1e6 / batches : 0.0, n ? static_cast<double>(shipped) / n : 0.0);
      std::fflush(stdout);
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
