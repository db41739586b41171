// The GPU media kernel (DALI style): Setup() plans a variable-size batch on the host (cuda/resize_plan.h),
// Run() uploads the plan and the packed uint8 RGB HWC batch (one copy from a pinned host buffer) and runs
// two fused kernels on the caller's stream: (1) Pillow's horizontal bicubic pass into a uint8 scratch,
// (2) the vertical pass + horizontal flip + CLIP normalisation + NCHW layout into `d_out` (fp32 or bf16,
// batch x 3 x image_size x image_size, device memory). A batch with colour jitter (BatchPlan::jitter) runs (2) into
// a uint8 buffer, summing each sample's contrast terms, then (3) jitter + normalisation + NCHW. The result equals
// cuda::reference_run bit for bit.
//
// Ordering: Run() enqueues only (no host sync). The next Setup() blocks until the previous Run's uploads
// have left the host staging buffer, and each Run() waits (on the device) for the previous one to finish,
// so one BatchResize may be fed from any stream. The caller's host input must stay untouched until
// input_released() is true (or Synchronize()). CUDA errors throw bt::Error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/host_buffer.h"
#include "cuda/resize_plan.h"

struct CUstream_st;  // cudaStream_t without including the CUDA headers

namespace bt::cuda {

// True when the CUDA runtime sees at least one device; otherwise `why` says what is missing.
bool cuda_device_available(std::string* why = nullptr);

class BatchResize {
 public:
  BatchResize();
  ~BatchResize();
  BatchResize(const BatchResize&) = delete;
  BatchResize& operator=(const BatchResize&) = delete;

  const BatchPlan& Setup(const std::vector<SampleSpec>& specs, const std::vector<uint64_t>& offsets,
                         size_t input_bytes, int image_size, OutputType type, const float* mean = nullptr,
                         const float* std = nullptr);
  // host_input: plan.input_bytes bytes, ideally pinned (PinnedBuffer) so the copy is asynchronous.
  void Run(CUstream_st* stream, const uint8_t* host_input, void* d_out);
  // The same with the batch already on the device (e.g. decoded by nvJPEG).
  void RunDevice(CUstream_st* stream, const uint8_t* d_input, void* d_out);

  bool input_released() const;  // the host input of the last Run has been copied
  size_t allocations() const;   // device/pinned buffer growths so far (steady-state batches add none)
  void Synchronize() const;     // waits for the last Run to complete
  const BatchPlan& plan() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Page-locked host memory (cudaHostAlloc) as a HostAllocator: LoaderOptions::packed_allocator of the GPU media
// pipeline, so the loader packs each batch where the device copies from asynchronously.
const HostAllocator& pinned_host_allocator();

// Page-locked host memory for the packed input batch (grows, never shrinks).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  uint8_t* reserve(size_t bytes);
  uint8_t* data() const { return data_; }
  size_t capacity() const { return cap_; }

 private:
  uint8_t* data_ = nullptr;
  size_t cap_ = 0;
};

// Device memory owned by the caller side (tests, benchmarks).
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes = 0);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  void resize(size_t bytes);  // contents are lost
  size_t size() const { return size_; }

 private:
  void* ptr_ = nullptr;
  size_t size_ = 0;
};

}  // namespace bt::cuda
