#include "cuda/nvjpeg_decoder.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <mutex>

#include "common/error.h"
#include "common/host_buffer.h"
#include "cuda/batch_resize.h"
#include "cuda/chroma_upsample_ref.h"
#include "cuda/ycc_convert.h"

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
constexpr int kOutputYUV = 1, kOutputRGBI = 5;
// nvjpegChromaSubsampling_t
constexpr int kCss444 = 0, kCss422 = 1, kCss420 = 2, kCss440 = 3;

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

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail("nvjpeg: ", what, " failed: ", cudaGetErrorString(e));
}

// What nvjpegGetImageInfo says of one JPEG.
struct Probe {
  int comps = 0, css = -1, w[kMaxComponent] = {}, h[kMaxComponent] = {};
};

// The planes of a 3-component JPEG whose chroma layout the colour kernel reproduces (cuda/ycc_math.h), with
// null plane pointers (the scratch is placed later); width 0 for every other JPEG (grayscale, 4:1:1, 4:1:0,
// CMYK...), which nvJPEG converts itself (RGBI).
YccPlanes ycc_layout(const Probe& p) {
  YccPlanes l;
  if (p.comps != 3) return l;
  switch (p.css) {
    case kCss444: break;
    case kCss422: l.h_factor = 2; break;
    case kCss420: l.h_factor = l.v_factor = 2; break;
    case kCss440: l.v_factor = 2; break;
    default: return l;
  }
  l.width = p.w[0], l.height = p.h[0], l.y_pitch = p.w[0];
  l.chroma_w = (l.width + l.h_factor - 1) / l.h_factor, l.chroma_h = (l.height + l.v_factor - 1) / l.v_factor;
  l.c_pitch = l.chroma_w;
  // nvJPEG writes the chroma planes at its own sizes; they must be libjpeg's for the result to be exact.
  bool agree = ycc_layout_supported(l);
  for (int c = 1; c < 3; ++c) agree = agree && p.w[c] == l.chroma_w && p.h[c] == l.chroma_h;
  if (!agree) {
    static std::once_flag logged;  // would make GPU decodes differ from PIL's: say so once
    std::call_once(logged, [&] {
      std::fprintf(stderr, "nvjpeg: %dx%d image: chroma planes %dx%d to nvJPEG, %dx%d to libjpeg; using nvJPEG's"
                   " RGB\n", l.width, l.height, p.w[1], p.h[1], l.chroma_w, l.chroma_h);
    });
    l.width = 0;
  }
  return l;
}

constexpr size_t kPlaneAlign = 256;
size_t align_up(size_t n) { return (n + kPlaneAlign - 1) / kPlaneAlign * kPlaneAlign; }

// One decode_batch() split by output format: planar YUV (then the colour kernel) or nvJPEG's own RGBI.
struct Plan {
  std::vector<size_t> yuv, rgbi;  // indices into the batch
  std::vector<int> rgbi_width;    // [rgbi]
  std::vector<YccPlanes> planes;  // [yuv], plane offsets in the scratch (pointers are filled later)
  std::vector<size_t> y_at, cb_at, cr_at;
  size_t scratch_bytes = 0;
};

class Decoder final : public NvjpegDecoder {
 public:
  Decoder(const Api* api, Session hw, Session hybrid) : api_(api), hw_(hw), hybrid_(hybrid) {}
  ~Decoder() override {
    if (done_) {
      cudaEventSynchronize(done_);
      cudaEventDestroy(done_);
    }
    if (scratch_) cudaFree(scratch_);
    close_session(api_, hw_);
    close_session(api_, hybrid_);
  }

  JpegInfo info(std::span<const uint8_t> jpeg) override {
    const Probe p = probe(jpeg);
    return JpegInfo{p.w[0], p.h[0], p.comps};
  }

  void decode_batch(CUstream_st* stream, const std::vector<std::span<const uint8_t>>& jpegs, uint8_t* d_out,
                    const std::vector<uint64_t>& offsets, const std::vector<JpegInfo>* expected) override {
    if (offsets.size() != jpegs.size()) fail("nvjpeg: ", jpegs.size(), " images but ", offsets.size(), " offsets");
    if (expected && expected->size() != jpegs.size())
      fail("nvjpeg: ", jpegs.size(), " images but ", expected->size(), " expected sizes");
    Plan plan = make_plan(jpegs, expected);
    if (jpegs.empty()) return;
    prepare_scratch(stream, plan.scratch_bytes);
    std::vector<nvjpegImage_t> yuv_dst(plan.yuv.size()), rgbi_dst(plan.rgbi.size());
    std::vector<YccJob> jobs(plan.yuv.size());
    for (size_t k = 0; k < plan.yuv.size(); ++k) {
      uint8_t* y = scratch_ + plan.y_at[k];
      uint8_t* cb = scratch_ + plan.cb_at[k];
      uint8_t* cr = scratch_ + plan.cr_at[k];
      YccPlanes& l = plan.planes[k];
      l.y = y, l.cb = cb, l.cr = cr;
      yuv_dst[k] = nvjpegImage_t{{y, cb, cr, nullptr},
                                 {size_t(l.y_pitch), size_t(l.c_pitch), size_t(l.c_pitch), 0}};
      jobs[k] = YccJob{l, d_out + offsets[plan.yuv[k]]};
    }
    for (size_t k = 0; k < plan.rgbi.size(); ++k) {
      const size_t i = plan.rgbi[k];
      rgbi_dst[k] = nvjpegImage_t{};
      rgbi_dst[k].channel[0] = d_out + offsets[i];
      rgbi_dst[k].pitch[0] = static_cast<size_t>(plan.rgbi_width[k]) * 3;
    }
    try {
      decode_group(stream, jpegs, plan.yuv, yuv_dst, kOutputYUV);
      decode_group(stream, jpegs, plan.rgbi, rgbi_dst, kOutputRGBI);
      ycc_to_rgb_device(stream, jobs);
    } catch (...) {
      cudaEventRecord(done_, stream);  // decodes already enqueued still write the scratch: the next call waits
      throw;
    }
    check(cudaEventRecord(done_, stream), "cudaEventRecord");
  }

  const char* backend() const override { return hw_.h ? "hardware" : "hybrid"; }

 private:
  Probe probe(std::span<const uint8_t> jpeg) const {
    Probe p;
    const nvjpegHandle_t handle = hw_.h ? hw_.h : hybrid_.h;
    if (!handle) fail("nvjpeg: no decoder session left");
    if (api_->GetImageInfo(handle, jpeg.data(), jpeg.size(), &p.comps, &p.css, p.w, p.h) != 0 || p.w[0] <= 0 ||
        p.h[0] <= 0)
      fail("nvjpeg: not a decodable JPEG (", jpeg.size(), " bytes)");
    return p;
  }

  Plan make_plan(const std::vector<std::span<const uint8_t>>& jpegs, const std::vector<JpegInfo>* expected) const {
    Plan plan;
    for (size_t i = 0; i < jpegs.size(); ++i) {
      Probe p;
      try {
        p = probe(jpegs[i]);
      } catch (const Error& e) {
        throw JpegError(i, e.what());
      }
      if (expected && (p.w[0] != (*expected)[i].width || p.h[0] != (*expected)[i].height))
        throw JpegError(i, str("nvjpeg: the image is ", p.w[0], "x", p.h[0], " to nvJPEG but ", (*expected)[i].width,
                               "x", (*expected)[i].height, " to the loader's header parse"));
      const YccPlanes l = ycc_layout(p);
      if (l.width == 0) {
        plan.rgbi.push_back(i);
        plan.rgbi_width.push_back(p.w[0]);
        continue;
      }
      plan.yuv.push_back(i);
      plan.planes.push_back(l);
      const size_t luma = static_cast<size_t>(l.y_pitch) * l.height;
      const size_t chroma = static_cast<size_t>(l.c_pitch) * l.chroma_h;
      plan.y_at.push_back(plan.scratch_bytes);
      plan.cb_at.push_back(plan.y_at.back() + align_up(luma));
      plan.cr_at.push_back(plan.cb_at.back() + align_up(chroma));
      plan.scratch_bytes = plan.cr_at.back() + align_up(chroma);
    }
    return plan;
  }

  // The scratch planes are reused by every call: this call's decodes (on `stream`, possibly another stream
  // than the last call's) must not overwrite them before the last call's colour kernels have read them.
  void prepare_scratch(cudaStream_t stream, size_t bytes) {
    if (!done_) check(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreate");
    else check(cudaStreamWaitEvent(stream, done_, 0), "cudaStreamWaitEvent");
    if (bytes <= scratch_cap_) return;
    check(cudaEventSynchronize(done_), "cudaEventSynchronize");
    if (scratch_) check(cudaFree(scratch_), "cudaFree");
    scratch_ = nullptr;
    scratch_cap_ = 0;
    const size_t cap = HostBuffer::grown_capacity(bytes);
    check(cudaMalloc(reinterpret_cast<void**>(&scratch_), cap), "cudaMalloc of the JPEG planes");
    scratch_cap_ = cap;
  }

  // Hardware batched decode when the backend takes it, else the hybrid decoder image by image (the
  // hardware decoder refuses e.g. progressive or 4:1:1 JPEGs: hybrid from then on).
  void decode_group(cudaStream_t stream, const std::vector<std::span<const uint8_t>>& jpegs,
                    const std::vector<size_t>& index, std::vector<nvjpegImage_t>& dst, int format) {
    if (index.empty()) return;
    std::vector<const unsigned char*> data(index.size());
    std::vector<size_t> lens(index.size());
    for (size_t k = 0; k < index.size(); ++k) data[k] = jpegs[index[k]].data(), lens[k] = jpegs[index[k]].size();
    if (hw_.h && api_->BatchedInit && api_->Batched) {
      const int n = static_cast<int>(index.size());
      if (api_->BatchedInit(hw_.h, hw_.s, n, 1, format) == 0 &&
          api_->Batched(hw_.h, hw_.s, data.data(), lens.data(), dst.data(), stream) == 0)
        return;
      std::fprintf(stderr, "nvjpeg: hardware batched decode (%s output) failed; using the hybrid decoder\n",
                   format == kOutputYUV ? "planar YUV" : "RGBI");
      close_session(api_, hw_);
    }
    if (!hybrid_.h && !open_session(api_, kBackendDefault, &hybrid_))
      fail("nvjpeg: cannot create the hybrid decoder");
    for (size_t k = 0; k < index.size(); ++k)
      if (api_->Decode(hybrid_.h, hybrid_.s, data[k], lens[k], format, &dst[k], stream) != 0)
        throw JpegError(index[k], "nvjpeg: decode failed (corrupt or unsupported JPEG)");
  }

  const Api* api_;
  Session hw_, hybrid_;
  uint8_t* scratch_ = nullptr;  // device: the YUV planes of the last batch
  size_t scratch_cap_ = 0;
  cudaEvent_t done_ = nullptr;  // recorded after the last batch's colour kernels
};

}  // namespace

std::unique_ptr<NvjpegDecoder> NvjpegDecoder::create(std::string* why, bool hybrid_only) {
  std::string reason;
  std::unique_ptr<NvjpegDecoder> d;
  if (!cuda_device_available(&reason)) {
    reason = "no CUDA device (" + reason + ")";
  } else if (const Api* api = load_api(&reason)) {
    Session hw, hybrid;
    if ((!hybrid_only && open_session(api, kBackendHardware, &hw)) || open_session(api, kBackendDefault, &hybrid))
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
