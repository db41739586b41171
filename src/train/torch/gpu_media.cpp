#include "train/torch/gpu_media.h"

#include <chrono>

#include "common/error.h"

#if defined(BT_HAVE_CUDA) && defined(BT_TORCH_CUDA)
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "cuda/batch_resize.h"
#include "cuda/decoded_spec.h"
#endif

namespace bt::train {

#if defined(BT_HAVE_CUDA) && defined(BT_TORCH_CUDA)

namespace {
// One submission's resources: reused round-robin, so the pinned buffer and the plan live until its kernel ran.
struct Slot {
  cuda::BatchResize resize;
  cuda::PinnedBuffer pinned;
  at::cuda::CUDAEvent done;  // recorded after the kernel: the slot may be refilled once it completed
  std::vector<cuda::SampleSpec> specs;
  std::vector<uint64_t> offsets;
};
struct Pending {
  torch::Tensor out;
  at::cuda::CUDAEvent ready;
};
}  // namespace

struct GpuMediaPipeline::Impl {
  GpuMediaOptions o;
  at::cuda::CUDAStream side;
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
  for (int i = 0; i <= o.max_in_flight; ++i) impl_->slots.push_back(std::make_unique<Slot>());
}

GpuMediaPipeline::~GpuMediaPipeline() {
  if (!impl_) return;
  try {
    impl_->side.synchronize();  // kernels still reading pinned buffers / writing outputs
  } catch (...) {
  }
}

void GpuMediaPipeline::submit(const loader::Batch& b) {
  Impl& m = *impl_;
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
  s.done.synchronize();  // its last kernel (a batch already taken) no longer reads the pinned buffer
  cuda::specs_of(d.samples, s.specs, s.offsets);
  const cuda::OutputType type = m.o.bf16 ? cuda::OutputType::kBFloat16 : cuda::OutputType::kFloat32;
  s.resize.Setup(s.specs, s.offsets, d.bytes, m.o.image_size, type, m.o.mean.data(), m.o.std.data());
  uint8_t* host = s.pinned.reserve(std::max<size_t>(d.bytes, 1));
  std::memcpy(host, d.packed.data(), d.bytes);
  Pending p;
  {
    // Allocated on the side stream: the caching allocator ties the block to it; take() records the consumer's.
    c10::cuda::CUDAStreamGuard sg(m.side);
    const int64_t S = m.o.image_size;
    p.out = torch::empty({b.size, 3, S, S},
                         torch::TensorOptions().device(m.o.device).dtype(m.o.bf16 ? torch::kBFloat16 : torch::kFloat32));
    s.resize.Run(m.side.stream(), host, p.out.data_ptr());
    p.ready.record(m.side);
    s.done.record(m.side);
  }
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
void GpuMediaPipeline::submit(const loader::Batch&) { no_cuda(); }
torch::Tensor GpuMediaPipeline::take() { no_cuda(); }
size_t GpuMediaPipeline::in_flight() const { return 0; }
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
  pipe_.submit(*b);  // copies the images out: the host batch goes back to the loader here
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

}  // namespace bt::train
