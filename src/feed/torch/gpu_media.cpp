#include "feed/torch/gpu_media.h"

#include <chrono>

#include "common/error.h"

#if defined(BT_HAVE_CUDA) && defined(BT_TORCH_CUDA)
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "cuda/batch_resize.h"
#include "cuda/decode_resize.h"
#include "cuda/decoded_spec.h"
#include "cuda/nvjpeg_decoder.h"
#endif

namespace bt::feed {

#if defined(BT_HAVE_CUDA) && defined(BT_TORCH_CUDA)

namespace {
// One submission's resources, reused round-robin: the batch (its pinned bytes, its JPEGs) is held until the
// slot's work completed, because the device copies from it asynchronously.
struct Slot {
  explicit Slot(cuda::NvjpegDecoder* jpeg) : work(jpeg) {}
  cuda::DecodeResize work;
  cuda::DeviceLayout layout;
  cuda::PinnedBuffer pinned;  // only for batches the loader did not pack into page-locked memory
  loader::BatchPtr held;
};
struct Pending {
  torch::Tensor out;
  at::cuda::CUDAEvent ready;
};

bool is_page_locked(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // plain pageable memory on older runtimes: clear the error
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}
}  // namespace

struct GpuMediaPipeline::Impl {
  GpuMediaOptions o;
  at::cuda::CUDAStream side;
  std::unique_ptr<cuda::NvjpegDecoder> jpeg;
  std::vector<std::unique_ptr<Slot>> slots;
  size_t next_slot = 0;
  mutable std::mutex mu;  // guards pending (submit and take may run on different threads)
  std::deque<Pending> pending;
  explicit Impl(GpuMediaOptions opt)
      : o(opt), side(at::cuda::getStreamFromPool(/*isHighPriority=*/false, opt.device.index())) {}
};

GpuMediaPipeline::GpuMediaPipeline(GpuMediaOptions o) {
  std::string why;
  if (!o.device.is_cuda()) fail("--use_media_pipeline needs --device cuda (got ", o.device.str(), ")");
  if (!available(&why)) fail("--use_media_pipeline needs a GPU: ", why);
  if (o.image_size < 1) fail("--use_media_pipeline: image_size must be >= 1 (got ", o.image_size, ")");
  if (o.max_in_flight < 1) o.max_in_flight = 1;
  if (!o.device.has_index()) o.device = torch::Device(torch::kCUDA, 0);
  c10::cuda::CUDAGuard guard(o.device.index());
  impl_ = std::make_unique<Impl>(o);
  if (o.decode_jpegs && !(impl_->jpeg = cuda::NvjpegDecoder::create(&why)))
    fail("--media_decode gpu: nvJPEG is unavailable (", why, "); use --media_decode cpu");
  for (int i = 0; i <= o.max_in_flight; ++i) impl_->slots.push_back(std::make_unique<Slot>(impl_->jpeg.get()));
}

GpuMediaPipeline::~GpuMediaPipeline() {
  if (!impl_) return;
  try {
    impl_->side.synchronize();  // kernels still reading held batches / writing outputs
  } catch (...) {
  }
}

void GpuMediaPipeline::submit(loader::BatchPtr batch) {
  Impl& m = *impl_;
  if (!batch) fail("GpuMediaPipeline::submit: no batch");
  const loader::Batch& b = *batch;
  const loader::DecodedBatch& d = b.decoded;
  if (b.size < 1 || d.samples.size() != static_cast<size_t>(b.size))
    fail("--use_media_pipeline: batch ", b.index, " has no decoded images (the loader must run with output_decoded)");
  if (b.image_size != m.o.image_size)
    fail("--use_media_pipeline: batch image_size ", b.image_size, " but the pipeline was made for ", m.o.image_size);
  {
    std::lock_guard lk(m.mu);
    if (m.pending.size() >= static_cast<size_t>(m.o.max_in_flight))
      fail("GpuMediaPipeline: ", m.pending.size(), " batches submitted and not taken (max_in_flight ",
           m.o.max_in_flight, ")");
  }
  c10::cuda::CUDAGuard guard(m.o.device.index());
  Slot& s = *m.slots[m.next_slot];
  m.next_slot = (m.next_slot + 1) % m.slots.size();
  s.work.Synchronize();  // its last batch (already taken) is no longer read by the device
  s.held.reset();        // ... so it goes back to the loader
  cuda::layout_of(d.samples, s.layout);
  const uint8_t* host = d.packed.data();
  if (d.bytes && !is_page_locked(host)) {  // an asynchronous copy needs page-locked memory
    std::memcpy(s.pinned.reserve(d.bytes), host, d.bytes);
    host = s.pinned.data();
  }
  Pending p;
  {
    // Allocated on the side stream: the caching allocator ties the block to it; take() records the consumer's.
    c10::cuda::CUDAStreamGuard sg(m.side);
    const int64_t S = m.o.image_size;
    p.out = torch::empty({b.size, 3, S, S},
                         torch::TensorOptions().device(m.o.device).dtype(m.o.bf16 ? torch::kBFloat16 : torch::kFloat32));
    const cuda::OutputType type = m.o.bf16 ? cuda::OutputType::kBFloat16 : cuda::OutputType::kFloat32;
    try {
      s.work.Run(m.side.stream(), s.layout, host, m.o.image_size, type, m.o.mean.data(), m.o.std.data(),
                 p.out.data_ptr());
    } catch (const cuda::JpegError& e) {
      m.side.synchronize();  // the upload already enqueued still reads the batch, which unwinding hands back
      fail(b.image_keys.at(e.index), ": nvJPEG cannot decode this JPEG (", e.what(),
           "); --media_decode cpu decodes it on the CPU, where --on_bad_sample skip applies");
    }
    p.ready.record(m.side);
  }
  s.held = std::move(batch);
  std::lock_guard lk(m.mu);
  m.pending.push_back(std::move(p));
}

torch::Tensor GpuMediaPipeline::take() {
  Impl& m = *impl_;
  Pending p;
  {
    std::lock_guard lk(m.mu);
    if (m.pending.empty()) fail("GpuMediaPipeline::take: nothing was submitted");
    p = std::move(m.pending.front());
    m.pending.pop_front();
  }
  c10::cuda::CUDAGuard guard(m.o.device.index());
  at::cuda::CUDAStream cur = at::cuda::getCurrentCUDAStream(m.o.device.index());
  p.ready.block(cur);          // the consumer's stream waits on the device, not the host
  p.out.record_stream(cur);    // the block is not reused before the consumer's work on it is done
  return p.out;
}

size_t GpuMediaPipeline::in_flight() const {
  std::lock_guard lk(impl_->mu);
  return impl_->pending.size();
}

const HostAllocator* GpuMediaPipeline::pinned_allocator() { return &cuda::pinned_host_allocator(); }

size_t GpuMediaPipeline::device_allocations() const {
  size_t n = 0;
  for (const auto& s : impl_->slots) n += s->work.device_allocations();
  return n;
}

bool GpuMediaPipeline::decode_jpegs_on_device(loader::MediaDecode mode) {
  if (mode == loader::MediaDecode::kCpu) return false;
  std::string why;
  auto jpeg = cuda::NvjpegDecoder::create(&why);
  if (mode == loader::MediaDecode::kGpu) {
    if (!jpeg) fail("--media_decode gpu: nvJPEG is unavailable (", why, "); use --media_decode cpu");
    return true;
  }
  if (jpeg && std::string(jpeg->backend()) == "hardware") {
    std::fprintf(stderr, "--media_decode auto: baseline JPEGs are decoded on the GPU by nvJPEG's hardware "
                 "decoder (%s)\n", cuda::nvjpeg_library_loaded().c_str());
    return true;
  }
  std::fprintf(stderr, "--media_decode auto: JPEGs are decoded on the CPU (%s)\n",
               jpeg ? "nvJPEG has no hardware decoder on this GPU; --media_decode gpu uses its CUDA decoder"
                    : why.c_str());
  return false;
}

bool GpuMediaPipeline::available(std::string* why) {
  if (!cuda::cuda_device_available(why)) return false;
  if (!torch::cuda::is_available()) {
    if (why) *why = "libtorch sees no CUDA device";
    return false;
  }
  return true;
}

#else  // no CUDA kernels or a CPU-only libtorch: a stub that explains itself

struct GpuMediaPipeline::Impl {};

namespace {
[[noreturn]] void no_cuda() {
  fail("--use_media_pipeline needs a CUDA build of bridgetune and a GPU (this build has ",
#if defined(BT_HAVE_CUDA)
       "the CUDA kernels but a CPU-only libtorch",
#else
       "no CUDA kernels",
#endif
       "; build with nvcc and a CUDA libtorch, e.g. -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch; "
       "print(torch.utils.cmake_prefix_path)'))");
}
}  // namespace

GpuMediaPipeline::GpuMediaPipeline(GpuMediaOptions) { no_cuda(); }
GpuMediaPipeline::~GpuMediaPipeline() = default;
void GpuMediaPipeline::submit(loader::BatchPtr) { no_cuda(); }
torch::Tensor GpuMediaPipeline::take() { no_cuda(); }
size_t GpuMediaPipeline::in_flight() const { return 0; }
size_t GpuMediaPipeline::device_allocations() const { return 0; }
const HostAllocator* GpuMediaPipeline::pinned_allocator() { return nullptr; }
bool GpuMediaPipeline::decode_jpegs_on_device(loader::MediaDecode mode) {
  if (mode != loader::MediaDecode::kGpu) return false;
  no_cuda();
}
bool GpuMediaPipeline::available(std::string* why) {
  if (why) *why = "this build of bridgetune has no CUDA media pipeline";
  return false;
}

#endif

// ---- GpuMediaSource (builds everywhere; the pipeline member throws without CUDA) ----

namespace {
// The loader's mean/std for the kernel: one normalisation, whichever side resizes.
GpuMediaOptions normalised_as(GpuMediaOptions o, const loader::Loader& l) {
  o.mean = l.options().transform.mean;
  o.std = l.options().transform.std;
  o.decode_jpegs = l.options().ship_device_jpegs;
  return o;
}
}  // namespace

GpuMediaSource::GpuMediaSource(loader::Loader& loader, const text::Tokenizer& tok, int max_len, GpuMediaOptions o)
    : loader_(loader), tok_(tok), max_len_(max_len), device_(o.device), pipe_(normalised_as(o, loader)) {
  if (!loader_.options().output_decoded)
    fail("--use_media_pipeline: the train loader must run in decode-only mode (LoaderOptions::output_decoded)");
}

GpuMediaSource::~GpuMediaSource() {
  try {
    stop();
  } catch (...) {  // a destructor must not throw; the pipeline's own destructor waits for the side stream
  }
}

void GpuMediaSource::stop() {
  while (!queued_.empty()) {  // drop what was submitted ahead (its kernel may still run: take() orders it)
    queued_.pop_front();
    pipe_.take();
  }
  remaining_ = 0;
}

void GpuMediaSource::start(uint64_t epoch, size_t first_batch, size_t num_batches) {
  stop();
  loader_.start_epoch(epoch, first_batch * static_cast<size_t>(loader_.options().batch_size));
  remaining_ = num_batches;
}

bool GpuMediaSource::submit_one(double* wait_s) {
  if (remaining_ == 0) return false;
  const auto t0 = std::chrono::steady_clock::now();
  loader::BatchPtr b = loader_.next();
  *wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!b) return false;
  --remaining_;
  ModelBatch m;
  m.size = b->size;
  m.image_keys = b->image_keys;
  upload_captions(m, b->captions, tok_, max_len_, device_);
  pipe_.submit(std::move(b));  // the pipeline hands the batch back to the loader once the device has read it
  queued_.push_back(std::move(m));
  return true;
}

void GpuMediaSource::prefetch(double* wait_s) {
  *wait_s = 0;
  if (queued_.empty()) submit_one(wait_s);
}

std::optional<ModelBatch> GpuMediaSource::next(double* wait_s) {
  *wait_s = 0;
  if (queued_.empty()) submit_one(wait_s);
  std::optional<ModelBatch> out;
  if (!queued_.empty()) {
    out = std::move(queued_.front());
    queued_.pop_front();
    out->pixels = pipe_.take();
  }
  return out;
}

}  // namespace bt::feed
