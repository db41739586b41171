// The GPU media pipeline (--use_media_pipeline): turns the loader's decode-only batches (loader/decoded_batch.h)
// into the model's pixel_values on a CUDA device. submit() takes the batch and enqueues cuda::DecodeResize on a
// side stream from torch's pool -- one upload of the CPU-decoded images, nvJPEG for the encoded JPEGs
// (--media_decode gpu), then crop + antialiased bicubic + flip + normalise (bf16 or fp32 NCHW) into a tensor from
// torch's caching allocator -- and records an event; it does not wait for the GPU. It keeps the batch until its
// work completed, then hands it back to the loader: when the loader packed it into page-locked memory
// (pinned_allocator()) the device copies straight from it, else it is first copied into the slot's pinned
// buffer. take() hands out the oldest submitted batch's tensor after making the CALLER's current CUDA stream wait
// for that event (no host sync), so the work of step k+1 runs while step k computes. submit() and take() may be
// called from different threads (one producer, one consumer); batches come out in submission order. The output
// equals the CPU loader's pixels for the same rows for CPU-decoded images (tests/loader/decoded_loader_test.cpp
// checks the math on the CPU reference); nvJPEG-decoded ones match the CPU loader without DCT scaling up to float
// rounding: nvJPEG decodes as libjpeg-turbo does (tests/feed/torch/gpu_media_test.cpp states the tolerance).
//
// Compiled for real only with BT_HAVE_CUDA and a CUDA libtorch (BT_TORCH_CUDA); otherwise the constructor
// throws bt::Error "--use_media_pipeline needs a CUDA build of bridgetune and a GPU".
//
//   GpuMediaPipeline p({image_size, bf16, device});
//   p.submit(loader.next());                 // e.g. as soon as the loader hands it out
//   torch::Tensor pixels = p.take();         // right before the step that uses it
#pragma once
#include <torch/torch.h>

#include <array>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "loader/batch.h"
#include "loader/loader.h"
#include "text/tokenizer.h"
#include "feed/torch/batch_provider.h"

namespace bt::feed {

struct GpuMediaOptions {
  int image_size = 288;
  bool bf16 = false;  // output dtype: bf16 (--bf16) else fp32
  torch::Device device = torch::Device(torch::kCUDA, 0);
  int max_in_flight = 3;  // submitted but not yet taken; submit() blocks on the oldest beyond this
  // The normalisation of the kernel's lookup table; GpuMediaSource takes it from its loader's TransformSpec, so the
  // GPU path normalises exactly as the CPU loader would (the model folder's mean/std, else CLIP's).
  std::array<float, 3> mean{media::kClipMean[0], media::kClipMean[1], media::kClipMean[2]};
  std::array<float, 3> std{media::kClipStd[0], media::kClipStd[1], media::kClipStd[2]};
  bool decode_jpegs = false;  // batches carry encoded JPEGs (LoaderOptions::ship_device_jpegs): load nvJPEG
};

class GpuMediaPipeline {
 public:
  explicit GpuMediaPipeline(GpuMediaOptions o);
  ~GpuMediaPipeline();
  GpuMediaPipeline(const GpuMediaPipeline&) = delete;
  GpuMediaPipeline& operator=(const GpuMediaPipeline&) = delete;

  // The batch must come from a loader with LoaderOptions::output_decoded (else bt::Error). An image nvJPEG cannot
  // decode throws bt::Error naming its image key.
  void submit(loader::BatchPtr batch);
  // [B, 3, S, S] on the device, ordered after its resize on the caller's current stream. Throws if nothing
  // was submitted.
  torch::Tensor take();
  size_t in_flight() const;

  size_t device_allocations() const;  // buffer growths so far: steady-state batches add none

  // True when this build has the pipeline and a CUDA device is visible; otherwise *why says what is missing.
  static bool available(std::string* why = nullptr);
  // --media_decode auto|gpu|cpu -> whether JPEGs are decoded on the device (LoaderOptions::ship_device_jpegs).
  // The one place the mode is decided: gpu needs nvJPEG (else bt::Error naming the flag); auto takes nvJPEG only
  // with its hardware decoder, else one line says why the CPU decodes; cpu never.
  static bool decode_jpegs_on_device(loader::MediaDecode media_decode);
  // Page-locked host memory for LoaderOptions::packed_allocator (nullptr in builds without the pipeline).
  static const HostAllocator* pinned_allocator();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// BatchSource's counterpart for --use_media_pipeline: pulls decode-only batches from `loader` (which must have
// LoaderOptions::output_decoded), tokenizes the captions, and keeps ONE batch submitted ahead. The trainer calls
// prefetch() right after a step's kernels are enqueued (backward returned, before the host sync), so the host
// work for batch k+1 -- waiting for the loader, tokenizing, packing into pinned memory -- and its resize on the
// side stream overlap step k on the GPU instead of preceding it. next() returns batch k with pixels ready on the
// caller's stream (submitting it first if prefetch() was not called). Both report the time spent blocked on the
// loader as data wait. The BatchProvider contract (batch_provider.h); loader errors propagate from next() or
// prefetch(). Construction throws the stub's error in builds without the CUDA pipeline.
class GpuMediaSource : public BatchProvider {
 public:
  GpuMediaSource(loader::Loader& loader, const text::Tokenizer& tok, int max_len, GpuMediaOptions o);
  ~GpuMediaSource() override;
  void start(uint64_t epoch, size_t first_batch, size_t num_batches) override;
  std::optional<ModelBatch> next(double* wait_s) override;
  void prefetch(double* wait_s) override;  // submit the next batch now if none is queued (no-op at the epoch's end)
  void stop() override;

 private:
  bool submit_one(double* wait_s);
  loader::Loader& loader_;
  const text::Tokenizer& tok_;
  int max_len_;
  torch::Device device_;
  GpuMediaPipeline pipe_;
  std::deque<ModelBatch> queued_;  // submitted, in order; pixels filled by take()
  size_t remaining_ = 0;
};

}  // namespace bt::feed
