#include "cuda/nvjpeg_decoder.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <mutex>

#include "common/error.h"
#include "cuda/batch_resize.h"

namespace bt::cuda {
namespace {

// The few nvJPEG declarations we need (ABI of nvjpeg.h since CUDA 11), so no nvJPEG header is required.
using nvjpegHandle_t = struct nvjpegHandle*;
using nvjpegJpegState_t = struct nvjpegJpegState*;
using nvjpegStatus_t = int;
constexpr int kMaxComponent = 4;
struct nvjpegImage_t {
  unsigned char* channel[kMaxComponent];
  size_t pitch[kMaxComponent];
};
constexpr int kBackendDefault = 0, kBackendHardware = 3;
constexpr int kOutputRGBI = 5;

struct Api {
  void* lib = nullptr;
  std::string name;
  nvjpegStatus_t (*CreateEx)(int, void*, void*, unsigned, nvjpegHandle_t*) = nullptr;
  nvjpegStatus_t (*Destroy)(nvjpegHandle_t) = nullptr;
  nvjpegStatus_t (*StateCreate)(nvjpegHandle_t, nvjpegJpegState_t*) = nullptr;
  nvjpegStatus_t (*StateDestroy)(nvjpegJpegState_t) = nullptr;
  nvjpegStatus_t (*GetImageInfo)(nvjpegHandle_t, const unsigned char*, size_t, int*, int*, int*, int*) = nullptr;
  nvjpegStatus_t (*Decode)(nvjpegHandle_t, nvjpegJpegState_t, const unsigned char*, size_t, int, nvjpegImage_t*,
                           cudaStream_t) = nullptr;
  nvjpegStatus_t (*BatchedInit)(nvjpegHandle_t, nvjpegJpegState_t, int, int, int) = nullptr;
  nvjpegStatus_t (*Batched)(nvjpegHandle_t, nvjpegJpegState_t, const unsigned char* const*, const size_t*,
                            nvjpegImage_t*, cudaStream_t) = nullptr;
};

template <class F>
bool sym(void* lib, const char* name, F* f) {
  *f = reinterpret_cast<F>(dlsym(lib, name));
  return *f != nullptr;
}

const Api* load_api(std::string* why) {
  static Api api;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* n : {"libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so.11", "libnvjpeg.so"}) {
      api.lib = dlopen(n, RTLD_NOW | RTLD_LOCAL);
      if (api.lib) {
        api.name = n;
        break;
      }
    }
    if (!api.lib) {
      error = "libnvjpeg.so.{13,12,11} not found";
      return;
    }
    // nvjpegGetImageInfo's chroma-subsampling argument is an enum (int-sized) pointer.
    const bool ok = sym(api.lib, "nvjpegCreateEx", &api.CreateEx) && sym(api.lib, "nvjpegDestroy", &api.Destroy) &&
                    sym(api.lib, "nvjpegJpegStateCreate", &api.StateCreate) &&
                    sym(api.lib, "nvjpegJpegStateDestroy", &api.StateDestroy) &&
                    sym(api.lib, "nvjpegGetImageInfo", &api.GetImageInfo) && sym(api.lib, "nvjpegDecode", &api.Decode);
    sym(api.lib, "nvjpegDecodeBatchedInitialize", &api.BatchedInit);
    sym(api.lib, "nvjpegDecodeBatched", &api.Batched);
    if (!ok) {
      error = api.name + " lacks the nvjpegDecode API";
      dlclose(api.lib);
      api.lib = nullptr;
    }
  });
  if (!api.lib && why) *why = error;
  return api.lib ? &api : nullptr;
}

class Decoder final : public NvjpegDecoder {
 public:
  Decoder(const Api* api, nvjpegHandle_t h, nvjpegJpegState_t s, bool hw) : api_(api), h_(h), s_(s), hw_(hw) {}
  ~Decoder() override {
    api_->StateDestroy(s_);
    api_->Destroy(h_);
  }

  JpegInfo info(std::span<const uint8_t> jpeg) override {
    int comps = 0, subsampling = 0, w[kMaxComponent] = {}, h[kMaxComponent] = {};
    if (api_->GetImageInfo(h_, jpeg.data(), jpeg.size(), &comps, &subsampling, w, h) != 0 || w[0] <= 0 || h[0] <= 0)
      fail("nvjpeg: not a decodable JPEG (", jpeg.size(), " bytes)");
    return JpegInfo{w[0], h[0], comps};
  }

  void decode_batch(CUstream_st* stream, const std::vector<std::span<const uint8_t>>& jpegs, uint8_t* d_out,
                    const std::vector<uint64_t>& offsets) override {
    if (offsets.size() != jpegs.size()) fail("nvjpeg: ", jpegs.size(), " images but ", offsets.size(), " offsets");
    std::vector<nvjpegImage_t> dst(jpegs.size());
    std::vector<const unsigned char*> data(jpegs.size());
    std::vector<size_t> lens(jpegs.size());
    for (size_t i = 0; i < jpegs.size(); ++i) {
      const JpegInfo in = info(jpegs[i]);
      dst[i] = nvjpegImage_t{};
      dst[i].channel[0] = d_out + offsets[i];
      dst[i].pitch[0] = static_cast<size_t>(in.width) * 3;
      data[i] = jpegs[i].data();
      lens[i] = jpegs[i].size();
    }
    if (hw_ && api_->BatchedInit && api_->Batched && !jpegs.empty()) {
      const int n = static_cast<int>(jpegs.size());
      if (api_->BatchedInit(h_, s_, n, 1, kOutputRGBI) == 0 &&
          api_->Batched(h_, s_, data.data(), lens.data(), dst.data(), stream) == 0)
        return;
      hw_ = false;  // e.g. progressive JPEGs: the hardware decoder refuses them; stay hybrid from now on
      std::fprintf(stderr, "nvjpeg: hardware batched decode failed; using the hybrid decoder\n");
    }
    for (size_t i = 0; i < jpegs.size(); ++i)
      if (api_->Decode(h_, s_, data[i], lens[i], kOutputRGBI, &dst[i], stream) != 0)
        fail("nvjpeg: decode of sample ", i, " failed (corrupt or unsupported JPEG)");
  }

  const char* backend() const override { return hw_ ? "hardware" : "hybrid"; }

 private:
  const Api* api_;
  nvjpegHandle_t h_;
  nvjpegJpegState_t s_;
  bool hw_;
};

}  // namespace

std::unique_ptr<NvjpegDecoder> NvjpegDecoder::create(std::string* why) {
  std::string reason;
  std::unique_ptr<NvjpegDecoder> d;
  if (!cuda_device_available(&reason)) {
    reason = "no CUDA device (" + reason + ")";
  } else if (const Api* api = load_api(&reason)) {
    nvjpegHandle_t h = nullptr;
    bool hw = api->CreateEx(kBackendHardware, nullptr, nullptr, 0, &h) == 0;
    if (!hw && api->CreateEx(kBackendDefault, nullptr, nullptr, 0, &h) != 0) {
      reason = "nvjpegCreateEx failed";
    } else {
      nvjpegJpegState_t s = nullptr;
      if (api->StateCreate(h, &s) != 0) {
        api->Destroy(h);
        reason = "nvjpegJpegStateCreate failed";
      } else {
        d = std::make_unique<Decoder>(api, h, s, hw);
      }
    }
  }
  if (!d) {
    static std::once_flag logged;
    std::call_once(logged, [&] {
      std::fprintf(stderr, "nvjpeg: unavailable (%s); decoding JPEGs on the CPU\n", reason.c_str());
    });
    if (why) *why = reason;
  }
  return d;
}

std::string nvjpeg_library_loaded() {
  const Api* api = load_api(nullptr);
  return api ? api->name : std::string();
}

}  // namespace bt::cuda
