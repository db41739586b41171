#include "cuda/decode_resize.h"

#include <cuda_runtime.h>

#include "common/error.h"
#include "common/host_buffer.h"

namespace bt::cuda {
namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail("cuda DecodeResize: ", what, ": ", cudaGetErrorString(e));
}
}  // namespace

DecodeResize::DecodeResize(NvjpegDecoder* jpeg) : jpeg_(jpeg) {}

DecodeResize::~DecodeResize() {
  resize_.Synchronize();
  if (d_input_) cudaFree(d_input_);
}

void DecodeResize::Run(CUstream_st* stream, const DeviceLayout& l, const uint8_t* host_packed, int image_size,
                       OutputType type, const float* mean, const float* std, void* d_out) {
  if (!l.jpegs.empty() && !jpeg_)
    fail("cuda DecodeResize: sample ", l.jpegs.front(), " is an encoded JPEG but no nvJPEG decoder was given");
  // Setup waits for the previous Run, which may still read d_input_ and the host buffers.
  resize_.Setup(l.specs, l.offsets, l.input_bytes, image_size, type, mean, std);
  if (l.input_bytes > d_input_cap_) {
    if (d_input_) check(cudaFree(d_input_), "cudaFree");
    d_input_ = nullptr;
    d_input_cap_ = 0;
    const size_t cap = HostBuffer::grown_capacity(l.input_bytes);
    check(cudaMalloc(&d_input_, cap), "cudaMalloc of the input batch");
    d_input_cap_ = cap;
    ++allocations_;
  }
  auto* d_in = static_cast<uint8_t*>(d_input_);
  if (l.upload_bytes)
    check(cudaMemcpyAsync(d_in, host_packed, l.upload_bytes, cudaMemcpyHostToDevice, stream),
          "upload of the decoded images");
  if (!l.jpegs.empty()) {
    spans_.clear(), jpeg_offsets_.clear(), jpeg_sizes_.clear();
    for (size_t k = 0; k < l.jpegs.size(); ++k) {
      spans_.emplace_back(host_packed + l.jpeg_at[k], l.jpeg_bytes[k]);
      jpeg_offsets_.push_back(l.offsets[l.jpegs[k]]);
      jpeg_sizes_.push_back(JpegInfo{l.specs[l.jpegs[k]].width, l.specs[l.jpegs[k]].height, 3});
    }
    try {
      jpeg_->decode_batch(stream, spans_, d_in, jpeg_offsets_, &jpeg_sizes_);
    } catch (const JpegError& e) {
      throw JpegError(l.jpegs.at(e.index), e.what());  // its position in the batch, for the caller to name
    }
  }
  resize_.RunDevice(stream, d_in, d_out);
}

bool DecodeResize::done() const { return resize_.input_released(); }
void DecodeResize::Synchronize() const { resize_.Synchronize(); }

}  // namespace bt::cuda
