// JPEG decode on the GPU through nvJPEG, loaded with dlopen at run time (libnvjpeg.so.13/.12/.11/.so):
// never a build or link requirement. create() returns nullptr and prints ONE log line (per process) when
// the library or a device is missing; callers then keep the CPU libjpeg-turbo path (media/).
//
// decode_batch() writes each image as uint8 RGB HWC (width*height*3 bytes) at offsets[i] of a device
// buffer, i.e. exactly the packed layout BatchResize::RunDevice() consumes. It prefers nvJPEG's hardware
// decoder (A100/H100/H200 have one) and falls back to the hybrid CUDA decoder per image.
// Bad JPEG bytes throw bt::Error naming the sample index. One decoder per thread (nvJPEG states are not
// shared); output is stream-ordered on `stream`. Note: nvJPEG's IDCT/upsampling is not
// libjpeg-turbo's, so GPU-decoded pixels may differ from the CPU path by a few levels.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

struct CUstream_st;

namespace bt::cuda {

struct JpegInfo {
  int width = 0, height = 0, components = 0;
};

class NvjpegDecoder {
 public:
  // nullptr (and `why`) when nvJPEG or a CUDA device is unavailable.
  static std::unique_ptr<NvjpegDecoder> create(std::string* why = nullptr);
  virtual ~NvjpegDecoder() = default;

  virtual JpegInfo info(std::span<const uint8_t> jpeg) = 0;  // header only; throws bt::Error when bad
  virtual void decode_batch(CUstream_st* stream, const std::vector<std::span<const uint8_t>>& jpegs,
                            uint8_t* d_out, const std::vector<uint64_t>& offsets) = 0;
  virtual const char* backend() const = 0;  // "hardware" or "hybrid"
};

// The library name that was loaded, or "" (for logs and the GPU check).
std::string nvjpeg_library_loaded();

}  // namespace bt::cuda
