#include <cuda_runtime.h>

#include <cstring>

#include "common/error.h"
#include "common/host_buffer.h"
#include "cuda/batch_resize.h"
#include "cuda/pixel_math.h"

namespace bt::cuda {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail("cuda: ", what, " failed: ", cudaGetErrorString(e));
}

constexpr int kThreads = 256;
constexpr size_t kLutFloats = 3 * 256;

// Kernel 1: one thread per (needed source row, output column) of a sample -> 3 uint8 in the scratch.
__global__ void horizontal_pass(const SamplePlan* samples, const int32_t* coef, const uint8_t* input,
                                uint8_t* scratch, int n) {
  const SamplePlan s = samples[blockIdx.y];
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = t / n, o = t - (t / n) * n;
  if (r >= s.rows) return;
  const int32_t* xb = coef + s.x_coef;
  const int32_t* xw = xb + 2 * n + static_cast<size_t>(o) * s.x_taps;
  const uint8_t* row = input + s.in_offset + static_cast<size_t>(s.row0 + r) * s.width * 3;
  uint8_t v[3];
  tap_sum_rgb(row + xb[2 * o] * 3, 3, xw, xb[2 * o + 1], v);
  uint8_t* dst = scratch + s.scratch_offset + (static_cast<size_t>(r) * n + o) * 3;
  dst[0] = v[0];
  dst[1] = v[1];
  dst[2] = v[2];
}

template <class T>
__device__ __forceinline__ void store(T* out, size_t at, float v);
template <>
__device__ __forceinline__ void store<float>(float* out, size_t at, float v) { out[at] = v; }
template <>
__device__ __forceinline__ void store<uint16_t>(uint16_t* out, size_t at, float v) { out[at] = float_to_bf16(v); }

// Kernel 2: one thread per output pixel: vertical taps over the scratch, flip, lookup, NCHW store.
template <class T>
__global__ void vertical_pass(const SamplePlan* samples, const int32_t* coef, const float* lut_g,
                              const uint8_t* scratch, T* out, int n) {
  __shared__ float lut[kLutFloats];
  for (int i = threadIdx.x; i < static_cast<int>(kLutFloats); i += blockDim.x) lut[i] = lut_g[i];
  __syncthreads();
  const SamplePlan s = samples[blockIdx.y];
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n * n) return;
  const int y = t / n, x = t - (t / n) * n;
  const int sx = s.flip ? n - 1 - x : x;
  const int32_t* yb = coef + s.y_coef;
  const int32_t* yw = yb + 2 * n + static_cast<size_t>(y) * s.y_taps;
  uint8_t v[3];
  tap_sum_rgb(scratch + s.scratch_offset + (static_cast<size_t>(yb[2 * y]) * n + sx) * 3, n * 3, yw,
              yb[2 * y + 1], v);
  const size_t plane = static_cast<size_t>(n) * n;
  const size_t base = static_cast<size_t>(blockIdx.y) * 3 * plane + t;
  store<T>(out, base, lut[v[0]]);
  store<T>(out, base + plane, lut[256 + v[1]]);
  store<T>(out, base + 2 * plane, lut[512 + v[2]]);
}

// Kernel 2 of a batch with colour jitter: the vertical pass + flip into uint8 HWC (`u8`, image_size^2 * 3 bytes a
// sample) and, for a sample with a contrast step, its contrast terms (media/color_jitter_math.h) summed into
// sums[sample]: exact integer atomics, so any thread order gives the CPU's sum.
__global__ void vertical_pass_u8(const SamplePlan* samples, const int32_t* coef, const uint8_t* scratch, uint8_t* u8,
                                 unsigned long long* sums, int n) {
  const SamplePlan s = samples[blockIdx.y];
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t term = 0;
  if (t < n * n) {
    const int y = t / n, x = t - (t / n) * n;
    const int sx = s.flip ? n - 1 - x : x;
    const int32_t* yb = coef + s.y_coef;
    const int32_t* yw = yb + 2 * n + static_cast<size_t>(y) * s.y_taps;
    uint8_t* v = u8 + (static_cast<size_t>(blockIdx.y) * n * n + t) * 3;
    tap_sum_rgb(scratch + s.scratch_offset + (static_cast<size_t>(yb[2 * y]) * n + sx) * 3, n * 3, yw,
                yb[2 * y + 1], v);
    if (s.jitter.contrast != 1.0f) term = media::jitter_mean_term(s.jitter, v);
  }
  if (s.jitter.contrast == 1.0f) return;  // the same for the whole block: the warps below are complete
  for (int o = 16; o > 0; o >>= 1) term += __shfl_down_sync(0xffffffffu, term, o);
  if ((threadIdx.x & 31) == 0 && term) atomicAdd(&sums[blockIdx.y], static_cast<unsigned long long>(term));
}

// Kernel 3 of a batch with colour jitter: one thread per output pixel: jitter (with the sample's contrast mean),
// lookup, NCHW store.
template <class T>
__global__ void jitter_normalize(const SamplePlan* samples, const float* lut_g, const uint8_t* u8,
                                 const unsigned long long* sums, T* out, int n) {
  __shared__ float lut[kLutFloats];
  for (int i = threadIdx.x; i < static_cast<int>(kLutFloats); i += blockDim.x) lut[i] = lut_g[i];
  __syncthreads();
  const SamplePlan s = samples[blockIdx.y];
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n * n) return;
  const size_t plane = static_cast<size_t>(n) * n;
  const uint8_t* src = u8 + (static_cast<size_t>(blockIdx.y) * plane + t) * 3;
  uint8_t v[3] = {src[0], src[1], src[2]};
  if (media::jitter_any(s.jitter)) {
    const float mean = s.jitter.contrast != 1.0f ? media::jitter_mean(sums[blockIdx.y], plane) : 0.0f;
    media::jitter_pixel(s.jitter, mean, v);
  }
  const size_t base = static_cast<size_t>(blockIdx.y) * 3 * plane + t;
  store<T>(out, base, lut[v[0]]);
  store<T>(out, base + plane, lut[256 + v[1]]);
  store<T>(out, base + 2 * plane, lut[512 + v[2]]);
}

template <class T>
void launch_output(const BatchPlan& plan, cudaStream_t st, dim3 grid, const SamplePlan* samples, const int32_t* coef,
                   const float* lut, const uint8_t* scratch, void* jitter_buf, size_t u8_at, void* d_out) {
  const int n = plan.image_size;
  T* out = static_cast<T*>(d_out);
  if (!plan.jitter) {
    vertical_pass<T><<<grid, kThreads, 0, st>>>(samples, coef, lut, scratch, out, n);
    check(cudaGetLastError(), "vertical_pass launch");
    return;
  }
  auto* sums = static_cast<unsigned long long*>(jitter_buf);
  auto* u8 = static_cast<uint8_t*>(jitter_buf) + u8_at;
  check(cudaMemsetAsync(sums, 0, plan.samples.size() * sizeof(unsigned long long), st), "clearing the jitter sums");
  vertical_pass_u8<<<grid, kThreads, 0, st>>>(samples, coef, scratch, u8, sums, n);
  check(cudaGetLastError(), "vertical_pass_u8 launch");
  jitter_normalize<T><<<grid, kThreads, 0, st>>>(samples, lut, u8, sums, out, n);
  check(cudaGetLastError(), "jitter_normalize launch");
}

// Returns whether it allocated. Growth follows HostBuffer's rule (headroom), so steady-state batches reuse.
bool grow_device(void** p, size_t* cap, size_t need) {
  if (need <= *cap) return false;
  if (*p) check(cudaFree(*p), "cudaFree");
  *p = nullptr;
  *cap = 0;
  const size_t bytes = HostBuffer::grown_capacity(need);
  check(cudaMalloc(p, bytes), "cudaMalloc");
  *cap = bytes;
  return true;
}
}  // namespace

bool cuda_device_available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why) *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
    cudaGetLastError();  // clear the sticky-free error state
    return false;
  }
  return true;
}

struct BatchResize::Impl {
  BatchPlan plan;
  uint8_t* staging = nullptr;  // pinned: [SamplePlan...][lut][coef]
  size_t staging_cap = 0;
  size_t params_bytes = 0, lut_at = 0, coef_at = 0;
  void* d_params = nullptr;
  size_t d_params_cap = 0;
  void* d_input = nullptr;
  size_t d_input_cap = 0;
  void* d_scratch = nullptr;
  size_t d_scratch_cap = 0;
  void* d_jitter = nullptr;  // jitter batches: [per-sample sums][uint8 HWC outputs from jitter_u8_at]
  size_t d_jitter_cap = 0, jitter_u8_at = 0;
  cudaEvent_t uploaded = nullptr, done = nullptr;
  bool planned = false;
  size_t allocations = 0;

  Impl() {
    check(cudaEventCreateWithFlags(&uploaded, cudaEventDisableTiming), "cudaEventCreate");
    check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~Impl() {
    if (done) cudaEventSynchronize(done);
    if (staging) cudaFreeHost(staging);
    cudaFree(d_params);
    cudaFree(d_input);
    cudaFree(d_scratch);
    cudaFree(d_jitter);
    if (uploaded) cudaEventDestroy(uploaded);
    if (done) cudaEventDestroy(done);
  }

  void launch(cudaStream_t st, const uint8_t* d_in, void* d_out) {
    if (!planned) fail("cuda BatchResize: Run() before Setup()");
    check(cudaStreamWaitEvent(st, done, 0), "cudaStreamWaitEvent");
    check(cudaMemcpyAsync(d_params, staging, params_bytes, cudaMemcpyHostToDevice, st), "upload of the plan");
    const int n = plan.image_size;
    const int b = static_cast<int>(plan.samples.size());
    if (b > 65535) fail("cuda BatchResize: batch of ", b, " exceeds 65535 samples");
    if (b > 0) {
      const auto* samples = reinterpret_cast<const SamplePlan*>(d_params);
      const auto* coef = reinterpret_cast<const int32_t*>(static_cast<uint8_t*>(d_params) + coef_at);
      const auto* lut = reinterpret_cast<const float*>(static_cast<uint8_t*>(d_params) + lut_at);
      auto* scratch = static_cast<uint8_t*>(d_scratch);
      const long h_threads = static_cast<long>(plan.max_rows) * n;
      if (h_threads > 0) {
        dim3 grid(static_cast<unsigned>((h_threads + kThreads - 1) / kThreads), b);
        horizontal_pass<<<grid, kThreads, 0, st>>>(samples, coef, d_in, scratch, n);
        check(cudaGetLastError(), "horizontal_pass launch");
      }
      dim3 grid2(static_cast<unsigned>((static_cast<long>(n) * n + kThreads - 1) / kThreads), b);
      if (plan.type == OutputType::kFloat32)
        launch_output<float>(plan, st, grid2, samples, coef, lut, scratch, d_jitter, jitter_u8_at, d_out);
      else
        launch_output<uint16_t>(plan, st, grid2, samples, coef, lut, scratch, d_jitter, jitter_u8_at, d_out);
    }
    check(cudaEventRecord(done, st), "cudaEventRecord");
  }
};

BatchResize::BatchResize() : impl_(std::make_unique<Impl>()) {}
BatchResize::~BatchResize() = default;

const BatchPlan& BatchResize::Setup(const std::vector<SampleSpec>& specs, const std::vector<uint64_t>& offsets,
                                    size_t input_bytes, int image_size, OutputType type, const float* mean,
                                    const float* std) {
  Impl& m = *impl_;
  m.planned = false;
  m.plan = make_plan(specs, offsets, input_bytes, image_size, type, mean, std);
  // The previous Run may still be reading the staging buffer / device buffers we are about to reuse.
  check(cudaEventSynchronize(m.done), "waiting for the previous batch");
  m.lut_at = (m.plan.samples.size() * sizeof(SamplePlan) + 15) & ~size_t{15};
  m.coef_at = m.lut_at + kLutFloats * sizeof(float);
  m.params_bytes = m.coef_at + m.plan.coef.size() * sizeof(int32_t);
  if (m.params_bytes > m.staging_cap) {
    if (m.staging) check(cudaFreeHost(m.staging), "cudaFreeHost");
    m.staging = nullptr;
    m.staging_cap = 0;
    void* p = nullptr;
    const size_t bytes = HostBuffer::grown_capacity(m.params_bytes);
    check(cudaHostAlloc(&p, bytes, cudaHostAllocDefault), "cudaHostAlloc");
    m.staging = static_cast<uint8_t*>(p);
    m.staging_cap = bytes;
    ++m.allocations;
  }
  std::memcpy(m.staging, m.plan.samples.data(), m.plan.samples.size() * sizeof(SamplePlan));
  std::memcpy(m.staging + m.lut_at, m.plan.lut, kLutFloats * sizeof(float));
  std::memcpy(m.staging + m.coef_at, m.plan.coef.data(), m.plan.coef.size() * sizeof(int32_t));
  m.allocations += grow_device(&m.d_params, &m.d_params_cap, m.params_bytes);
  m.allocations += grow_device(&m.d_scratch, &m.d_scratch_cap, std::max<size_t>(m.plan.scratch_bytes, 1));
  if (m.plan.jitter) {
    const size_t b = m.plan.samples.size(), n = static_cast<size_t>(m.plan.image_size);
    m.jitter_u8_at = (b * sizeof(unsigned long long) + 255) & ~size_t{255};
    m.allocations += grow_device(&m.d_jitter, &m.d_jitter_cap, m.jitter_u8_at + b * n * n * 3);
  }
  m.planned = true;
  return m.plan;
}

void BatchResize::Run(CUstream_st* stream, const uint8_t* host_input, void* d_out) {
  Impl& m = *impl_;
  if (!m.planned) fail("cuda BatchResize: Run() before Setup()");
  m.allocations += grow_device(&m.d_input, &m.d_input_cap, std::max<size_t>(m.plan.input_bytes, 1));
  check(cudaStreamWaitEvent(stream, m.done, 0), "cudaStreamWaitEvent");
  check(cudaMemcpyAsync(m.d_input, host_input, m.plan.input_bytes, cudaMemcpyHostToDevice, stream),
        "upload of the input batch");
  check(cudaEventRecord(m.uploaded, stream), "cudaEventRecord");
  m.launch(stream, static_cast<const uint8_t*>(m.d_input), d_out);
}

void BatchResize::RunDevice(CUstream_st* stream, const uint8_t* d_input, void* d_out) {
  impl_->launch(stream, d_input, d_out);
  check(cudaEventRecord(impl_->uploaded, stream), "cudaEventRecord");
}

bool BatchResize::input_released() const { return cudaEventQuery(impl_->uploaded) == cudaSuccess; }
size_t BatchResize::allocations() const { return impl_->allocations; }
void BatchResize::Synchronize() const { check(cudaEventSynchronize(impl_->done), "cudaEventSynchronize"); }
const BatchPlan& BatchResize::plan() const { return impl_->plan; }

const HostAllocator& pinned_host_allocator() {
  static const HostAllocator a{[](size_t bytes, void*) -> void* {
                                 void* p = nullptr;
                                 return cudaHostAlloc(&p, bytes, cudaHostAllocDefault) == cudaSuccess ? p : nullptr;
                               },
                               [](void* p, void*) { cudaFreeHost(p); }, nullptr, "cudaHostAlloc"};
  return a;
}

PinnedBuffer::~PinnedBuffer() {
  if (data_) cudaFreeHost(data_);
}

uint8_t* PinnedBuffer::reserve(size_t bytes) {
  if (bytes <= cap_) return data_;
  if (data_) check(cudaFreeHost(data_), "cudaFreeHost");
  data_ = nullptr;
  cap_ = 0;
  void* p = nullptr;
  const size_t cap = HostBuffer::grown_capacity(bytes);
  check(cudaHostAlloc(&p, cap, cudaHostAllocDefault), "cudaHostAlloc");
  data_ = static_cast<uint8_t*>(p);
  cap_ = cap;
  return data_;
}

DeviceBuffer::DeviceBuffer(size_t bytes) { resize(bytes); }
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}
void DeviceBuffer::resize(size_t bytes) {
  if (ptr_) check(cudaFree(ptr_), "cudaFree");
  ptr_ = nullptr;
  size_ = 0;
  if (bytes) check(cudaMalloc(&ptr_, bytes), "cudaMalloc");
  size_ = bytes;
}

}  // namespace bt::cuda
