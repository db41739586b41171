// One decode-only batch to the model's pixels on the device: upload the CPU-decoded part, decode the encoded JPEGs
// with nvJPEG, then crop + resize + flip + normalise (BatchResize). The `Run` of the GPU media pipeline; needs only
// the CUDA runtime (nvJPEG is loaded at run time by NvjpegDecoder).
//
// Contract: Run() enqueues on `stream` and returns without waiting for the device. The layout comes from
// cuda::layout_of (decoded_spec.h); host_packed is the loader's packed buffer (pinned for an asynchronous copy),
// which, like the JPEG bytes inside it, must stay untouched until the batch completed (done() or Synchronize()).
// Each Run waits on the host for the previous Run of this object to finish reading its buffers, so a caller keeps
// a few DecodeResize objects round-robin to overlap batches. Device buffers grow with headroom (never shrink), so
// steady-state batches allocate nothing: device_allocations() counts the growths. A JPEG nvJPEG cannot decode
// throws cuda::JpegError whose index is the sample's position in the batch; an encoded sample without a decoder
// throws bt::Error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "cuda/batch_resize.h"
#include "cuda/decoded_spec.h"
#include "cuda/nvjpeg_decoder.h"

namespace bt::cuda {

class DecodeResize {
 public:
  explicit DecodeResize(NvjpegDecoder* jpeg = nullptr);  // not owned; may be null when no sample is encoded
  ~DecodeResize();
  DecodeResize(const DecodeResize&) = delete;
  DecodeResize& operator=(const DecodeResize&) = delete;

  void Run(CUstream_st* stream, const DeviceLayout& layout, const uint8_t* host_packed, int image_size,
           OutputType type, const float* mean, const float* std, void* d_out);
  bool done() const;         // the last Run completed (its host buffer may be reused)
  void Synchronize() const;  // waits for the last Run
  size_t device_allocations() const { return allocations_ + resize_.allocations(); }

 private:
  NvjpegDecoder* jpeg_;
  BatchResize resize_;
  void* d_input_ = nullptr;
  size_t d_input_cap_ = 0;
  size_t allocations_ = 0;
  std::vector<std::span<const uint8_t>> spans_;
  std::vector<uint64_t> jpeg_offsets_;
  std::vector<JpegInfo> jpeg_sizes_;
};

}  // namespace bt::cuda
