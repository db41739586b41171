#include <cuda_runtime.h>

#include <algorithm>

#include "common/error.h"
#include "cuda/ycc_convert.h"

namespace bt::cuda {
namespace {

constexpr int kThreads = 256;
// Jobs travel as a kernel argument (no upload, no allocation); 4 KiB is the portable argument limit.
constexpr int kJobsPerLaunch = 48;
struct JobChunk {
  YccJob job[kJobsPerLaunch];
};
static_assert(sizeof(JobChunk) <= 4000, "kernel arguments are limited to 4 KiB");

// One thread per output pixel; blockIdx.y is the job. __grid_constant__: the jobs are read in place from the
// argument space, not copied to every thread's local memory (the index is dynamic).
__global__ void ycc_to_rgb_kernel(const __grid_constant__ JobChunk chunk) {
  const YccJob& j = chunk.job[blockIdx.y];
  const long t = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int w = j.planes.width;
  if (t >= static_cast<long>(w) * j.planes.height) return;
  const int y = static_cast<int>(t / w), x = static_cast<int>(t - static_cast<long>(y) * w);
  uint8_t v[3];
  ycc_pixel(j.planes, x, y, v);
  uint8_t* o = j.rgb_out + t * 3;
  o[0] = v[0];
  o[1] = v[1];
  o[2] = v[2];
}

}  // namespace

void ycc_to_rgb_device(CUstream_st* stream, const std::vector<YccJob>& jobs) {
  for (size_t first = 0; first < jobs.size(); first += kJobsPerLaunch) {
    const size_t n = std::min<size_t>(kJobsPerLaunch, jobs.size() - first);
    JobChunk chunk{};
    long most = 0;
    for (size_t k = 0; k < n; ++k) {
      chunk.job[k] = jobs[first + k];
      most = std::max(most, static_cast<long>(jobs[first + k].planes.width) * jobs[first + k].planes.height);
    }
    if (most == 0) continue;
    const dim3 grid(static_cast<unsigned>((most + kThreads - 1) / kThreads), static_cast<unsigned>(n));
    ycc_to_rgb_kernel<<<grid, kThreads, 0, stream>>>(chunk);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) fail("cuda: ycc_to_rgb launch failed: ", cudaGetErrorString(e));
  }
}

}  // namespace bt::cuda
