// How many images/s does the fused GPU kernel turn from decoded uint8 RGB (~740x700) into the model's
// normalised NCHW batch? Reports kernel-only (device-resident input), upload + kernel (one pinned copy per
// batch) and, for scale, the single-thread CPU reference. One JSON line on stdout.
//
//   bench_cuda_resize [--batch 48] [--size 294] [--iters 100] [--type bf16|fp32] [--mode train|eval]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/batch_resize.h"
#include "cuda/resize_ref.h"

using namespace bt::cuda;

namespace {

struct Args {
  int batch = 48, size = 294, iters = 100;
  bool bf16 = true, train = true;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--batch") a.batch = std::stoi(v);
    else if (k == "--size") a.size = std::stoi(v);
    else if (k == "--iters") a.iters = std::stoi(v);
    else if (k == "--type") a.bf16 = v == "bf16";
    else if (k == "--mode") a.train = v == "train";
    else { std::fprintf(stderr, "unknown flag %s\n", k.c_str()); std::exit(2); }
  }
  return a;
}

void ck(cudaError_t e) {
  if (e != cudaSuccess) { std::fprintf(stderr, "cuda: %s\n", cudaGetErrorString(e)); std::exit(1); }
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  std::mt19937 rng(42);
  std::vector<SampleSpec> specs;
  std::vector<uint64_t> offsets;
  size_t total = 0;
  for (int i = 0; i < a.batch; ++i) {
    const int w = 700 + static_cast<int>(rng() % 80), h = 660 + static_cast<int>(rng() % 80);
    if (a.train) {  // a RandomResizedCrop-like rect covering 30-100 % of the area
      std::uniform_real_distribution<double> u(0.55, 1.0);
      const int cw = static_cast<int>(w * u(rng)), ch = static_cast<int>(h * u(rng));
      specs.push_back(crop_spec(w, h, static_cast<int>(rng() % (h - ch + 1)), static_cast<int>(rng() % (w - cw + 1)),
                                ch, cw, a.size, rng() % 2));
    } else {
      specs.push_back(eval_spec(w, h, a.size));
    }
    offsets.push_back(total);
    total += static_cast<size_t>(w) * h * 3;
  }
  std::vector<uint8_t> host(total);
  for (auto& b : host) b = static_cast<uint8_t>(rng());
  const OutputType type = a.bf16 ? OutputType::kBFloat16 : OutputType::kFloat32;

  // CPU reference, single thread, a few samples' worth.
  const BatchPlan cpu_plan = make_plan(specs, offsets, total, a.size, type);
  std::vector<uint8_t> cpu_out(cpu_plan.output_bytes());
  const auto t0 = std::chrono::steady_clock::now();
  reference_run(cpu_plan, host.data(), cpu_out.data());
  const double cpu_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto t1 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) make_plan(specs, offsets, total, a.size, type);
  const double setup_ms = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() * 100;

  std::string why;
  if (!cuda_device_available(&why)) {
    std::printf("{\"bench\":\"cuda_resize\",\"gpu\":null,\"why\":\"%s\",\"batch\":%d,\"size\":%d,"
                "\"cpu_ref_images_per_s\":%.1f,\"setup_ms\":%.3f}\n", why.c_str(), a.batch, a.size, a.batch / cpu_s, setup_ms);
    return 0;
  }
  cudaDeviceProp prop{};
  ck(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t st;
  ck(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  PinnedBuffer pinned;
  std::memcpy(pinned.reserve(total), host.data(), total);
  DeviceBuffer din(total), dout(cpu_plan.output_bytes());
  ck(cudaMemcpy(din.get(), host.data(), total, cudaMemcpyHostToDevice));
  BatchResize k;
  k.Setup(specs, offsets, total, a.size, type);
  cudaEvent_t e0, e1;
  ck(cudaEventCreate(&e0));
  ck(cudaEventCreate(&e1));
  auto time_runs = [&](bool upload) {
    for (int i = 0; i < 5; ++i) upload ? k.Run(st, pinned.data(), dout.get()) : k.RunDevice(st, static_cast<const uint8_t*>(din.get()), dout.get());
    ck(cudaEventRecord(e0, st));
    for (int i = 0; i < a.iters; ++i)
      upload ? k.Run(st, pinned.data(), dout.get()) : k.RunDevice(st, static_cast<const uint8_t*>(din.get()), dout.get());
    ck(cudaEventRecord(e1, st));
    ck(cudaEventSynchronize(e1));
    float ms = 0;
    ck(cudaEventElapsedTime(&ms, e0, e1));
    return static_cast<double>(a.batch) * a.iters / (ms / 1000.0);
  };
  const double kernel_ips = time_runs(false);
  const double upload_ips = time_runs(true);
  // Parity on this very batch (the unit tests cover more shapes).
  std::vector<uint8_t> gpu_out(cpu_plan.output_bytes());
  ck(cudaMemcpy(gpu_out.data(), dout.get(), gpu_out.size(), cudaMemcpyDeviceToHost));
  const bool same = gpu_out == cpu_out;
  std::printf("{\"bench\":\"cuda_resize\",\"gpu\":\"%s\",\"batch\":%d,\"size\":%d,\"type\":\"%s\",\"mode\":\"%s\","
              "\"input_mb\":%.1f,\"kernel_images_per_s\":%.0f,\"upload_kernel_images_per_s\":%.0f,"
              "\"cpu_ref_images_per_s\":%.1f,\"setup_ms\":%.3f,\"bit_exact_vs_cpu\":%s}\n",
              prop.name, a.batch, a.size, a.bf16 ? "bf16" : "fp32", a.train ? "train" : "eval", total / 1e6, kernel_ips,
              upload_ips, a.batch / cpu_s, setup_ms, same ? "true" : "false");
  return same ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
