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

// One nvJPEG handle + state; the hardware backend only serves the batched API, so the per-image hybrid
// decoder gets its own pair, made on first use.
struct Session {
  nvjpegHandle_t h = nullptr;
  nvjpegJpegState_t s = nullptr;
};

bool open_session(const Api* api, int backend, Session* out) {
  Session x;
  if (api->CreateEx(backend, nullptr, nullptr, 0, &x.h) != 0) return false;
  if (api->StateCreate(x.h, &x.s) != 0) {
    api->Destroy(x.h);
    return false;
  }
  *out = x;
  return true;
}

void close_session(const Api* api, Session& x) {
  if (x.s) api->StateDestroy(x.s);
  if (x.h) api->Destroy(x.h);
  x = Session{};
}

class Decoder final : public NvjpegDecoder {
 public:
  Decoder(const Api* api, Session hw, Session hybrid) : api_(api), hw_(hw), hybrid_(hybrid) {}
  ~Decoder() override {
    close_session(api_, hw_);
    close_session(api_, hybrid_);
  }

  JpegInfo info(std::span<const uint8_t> jpeg) override {
    int comps = 0, subsampling = 0, w[kMaxComponent] = {}, h[kMaxComponent] = {};
    const nvjpegHandle_t handle = hw_.h ? hw_.h : hybrid_.h;
    if (api_->GetImageInfo(handle, jpeg.data(), jpeg.size(), &comps, &subsampling, w, h) != 0 || w[0] <= 0 ||
        h[0] <= 0)
      fail("nvjpeg: not a decodable JPEG (", jpeg.size(), " bytes)");
    return JpegInfo{w[0], h[0], comps};
  }

  void decode_batch(CUstream_st* stream, const std::vector<std::span<const uint8_t>>& jpegs, uint8_t* d_out,
                    const std::vector<uint64_t>& offsets, const std::vector<JpegInfo>* expected) override {
    if (offsets.size() != jpegs.size()) fail("nvjpeg: ", jpegs.size(), " images but ", offsets.size(), " offsets");
    if (expected && expected->size() != jpegs.size())
      fail("nvjpeg: ", jpegs.size(), " images but ", expected->size(), " expected sizes");
    std::vector<nvjpegImage_t> dst(jpegs.size());
    std::vector<const unsigned char*> data(jpegs.size());
    std::vector<size_t> lens(jpegs.size());
    for (size_t i = 0; i < jpegs.size(); ++i) {
      JpegInfo in;
      try {
        in = info(jpegs[i]);
      } catch (const Error& e) {
        throw JpegError(i, e.what());
      }
      if (expected && (in.width != (*expected)[i].width || in.height != (*expected)[i].height))
        throw JpegError(i, str("nvjpeg: the image is ", in.width, "x", in.height, " to nvJPEG but ",
                               (*expected)[i].width, "x", (*expected)[i].height, " to the loader's header parse"));
      dst[i] = nvjpegImage_t{};
      dst[i].channel[0] = d_out + offsets[i];
      dst[i].pitch[0] = static_cast<size_t>(in.width) * 3;
      data[i] = jpegs[i].data();
      lens[i] = jpegs[i].size();
    }
    if (jpegs.empty()) return;
    if (hw_.h && api_->BatchedInit && api_->Batched) {
      const int n = static_cast<int>(jpegs.size());
      if (api_->BatchedInit(hw_.h, hw_.s, n, 1, kOutputRGBI) == 0 &&
          api_->Batched(hw_.h, hw_.s, data.data(), lens.data(), dst.data(), stream) == 0)
        return;
      // e.g. progressive or 4:1:1 JPEGs, which the hardware decoder refuses: hybrid from now on.
      std::fprintf(stderr, "nvjpeg: hardware batched decode failed; using the hybrid decoder\n");
      close_session(api_, hw_);
    }
    if (!hybrid_.h && !open_session(api_, kBackendDefault, &hybrid_))
      fail("nvjpeg: cannot create the hybrid decoder");
    for (size_t i = 0; i < jpegs.size(); ++i)
      if (api_->Decode(hybrid_.h, hybrid_.s, data[i], lens[i], kOutputRGBI, &dst[i], stream) != 0)
        throw JpegError(i, "nvjpeg: decode failed (corrupt or unsupported JPEG)");
  }

  const char* backend() const override { return hw_.h ? "hardware" : "hybrid"; }

 private:
  const Api* api_;
  Session hw_, hybrid_;
};

}  // namespace

std::unique_ptr<NvjpegDecoder> NvjpegDecoder::create(std::string* why) {
  std::string reason;
  std::unique_ptr<NvjpegDecoder> d;
  if (!cuda_device_available(&reason)) {
    reason = "no CUDA device (" + reason + ")";
  } else if (const Api* api = load_api(&reason)) {
    Session hw, hybrid;
    if (open_session(api, kBackendHardware, &hw) || open_session(api, kBackendDefault, &hybrid))
      d = std::make_unique<Decoder>(api, hw, hybrid);
    else
      reason = "nvjpegCreateEx failed for both the hardware and the default backend";
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
