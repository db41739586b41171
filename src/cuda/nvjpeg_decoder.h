// JPEG decode on the GPU through nvJPEG, loaded with dlopen at run time (libnvjpeg.so.13/.12/.11/.so):
// never a build or link requirement. create() returns nullptr and prints ONE log line (per process) when
// the library or a device is missing; callers then keep the CPU libjpeg-turbo path (media/).
//
// decode_batch() writes each image as uint8 RGB HWC (width*height*3 bytes) at offsets[i] of a device
// buffer, i.e. exactly the packed layout BatchResize::RunDevice() consumes. It prefers nvJPEG's hardware
// decoder (A100/H100/H200 have one) and falls back to the hybrid CUDA decoder per image.
// Pixels are meant to equal libjpeg-turbo's default decode (hence PIL's): nvJPEG's IDCT matches libjpeg's
// ISLOW, but its own RGB output upsamples chroma by replication (libjpeg's TJFLAG_FASTUPSAMPLE). So YCbCr
// 4:4:4 / 4:2:2 / 4:2:0 / 4:4:0 JPEGs are decoded to planes and cuda/ycc_convert.h applies libjpeg's fancy
// upsampling and colour conversion; grayscale (nvJPEG replicates Y, as libjpeg does) and 4:1:1 / 4:1:0
// (not exact) keep nvJPEG's interleaved RGB. tests/cuda/nvjpeg_test.cpp checks the equality on a device.
// Bad JPEG bytes throw JpegError: a bt::Error carrying the failing image's index in the batch. One decoder
// per thread (nvJPEG states are not shared); output is stream-ordered on `stream`. The decoder's plane
// scratch is reused by the next call, which waits (on the device) for this call's kernels, whatever stream.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/error.h"

struct CUstream_st;

namespace bt::cuda {

// An image of a decode_batch() nvJPEG refused; `index` is its position in `jpegs`.
class JpegError : public Error {
 public:
  JpegError(size_t i, const std::string& what) : Error(what), index(i) {}
  size_t index;
};

struct JpegInfo {
  int width = 0, height = 0, components = 0;
};

class NvjpegDecoder {
 public:
  // nullptr (and `why`) when nvJPEG or a CUDA device is unavailable. hybrid_only skips the hardware
  // decoder (to compare the two backends' chroma upsampling on 4:2:0 JPEGs).
  static std::unique_ptr<NvjpegDecoder> create(std::string* why = nullptr, bool hybrid_only = false);
  virtual ~NvjpegDecoder() = default;

  virtual JpegInfo info(std::span<const uint8_t> jpeg) = 0;  // header only; throws bt::Error when bad
  // expected (optional, [jpegs]): the sizes the caller sized d_out for (from its own header parse); an image
  // nvJPEG sees at another size throws instead of writing past its region.
  virtual void decode_batch(CUstream_st* stream, const std::vector<std::span<const uint8_t>>& jpegs,
                            uint8_t* d_out, const std::vector<uint64_t>& offsets,
                            const std::vector<JpegInfo>* expected = nullptr) = 0;
  virtual const char* backend() const = 0;  // "hardware" or "hybrid"
};

// The library name that was loaded, or "" (for logs and the GPU check).
std::string nvjpeg_library_loaded();

}  // namespace bt::cuda
