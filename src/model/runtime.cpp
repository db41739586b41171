// Torch's process-wide CPU settings: its threads and the allocator of its CPU tensors. Kept out of the
// torch/torch.h translation units: ATen/Parallel.h and c10/core/CPUAllocator.h are cheap.
#include <ATen/Parallel.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <thread>

#include "common/process_memory.h"
#include "common/runtime.h"
#include "model/runtime.h"

namespace bt::model {
namespace {

// Every CPU tensor's bytes: malloc'd with room to align them to 64 bytes here, the malloc'd address kept in the 8
// bytes before them. c10's own allocator asks posix_memalign(64, n), and glibc (2.36) serves that by carving an
// n-byte chunk out of a free one of at least n + 96 bytes: a freed n-byte chunk never fits the next n-byte request,
// so every step's same-sized activations go to fresh heap pages, which the kernel zero-fills on first touch (the
// word-embedding gradient's 51 MB zeros() took 95 ms of a 0.5 s small-preset step; 1 ms once reused). malloc(n + 72)
// freed is exactly what the next malloc(n + 72) needs.
class ReusingCpuAllocator final : public c10::Allocator {
 public:
  static constexpr uintptr_t kAlignment = 64;  // c10's, for the vectorised kernels

  c10::DataPtr allocate(size_t n) const override {
    const c10::Device cpu(c10::DeviceType::CPU);
    if (n == 0) return {nullptr, nullptr, &release, cpu};
    void* block = std::malloc(n + kAlignment + sizeof(void*));
    TORCH_CHECK(block, "out of CPU memory: a tensor of ", n, " bytes could not be allocated");
    const uintptr_t data = (reinterpret_cast<uintptr_t>(block) + sizeof(void*) + kAlignment - 1) & ~(kAlignment - 1);
    reinterpret_cast<void**>(data)[-1] = block;
    // data == context: raw_allocate / raw_deallocate (which some ATen kernels use) need them equal.
    return {reinterpret_cast<void*>(data), reinterpret_cast<void*>(data), &release, cpu};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

 private:
  static void release(void* data) {
    if (data) std::free(static_cast<void**>(data)[-1]);
  }
};

}  // namespace

void use_reusing_cpu_allocator() {
  if (!bt::runtime_switches().keep_freed_memory) return;
  // Never destroyed: tensors freed by static destructors at exit may still allocate. Priority 1 outranks c10's
  // default (0); tensors allocated before keep their own deleter.
  static auto* allocator = new ReusingCpuAllocator();
  c10::SetCPUAllocator(allocator, /*priority=*/1);
}

void configure_torch_threads(int n) {
  if (n <= 0) n = bt::available_cores();
  at::set_num_threads(bt::capped_threads(n));
  // Debian's libtorch may call into OpenBLAS, whose own pool would oversubscribe torch's threads.
  bt::pin_openblas_to_one_thread();
}

void init_runtime(const RuntimeOptions& options) {
  bt::init_runtime(options);
  use_reusing_cpu_allocator();
  if (options.torch_threads >= 0) {
    configure_torch_threads(options.torch_threads);
  } else if (bt::capped_threads(at::get_num_threads()) != at::get_num_threads()) {
    at::set_num_threads(bt::capped_threads(at::get_num_threads()));  // torch's default, under the cap
  }
}

int model_kernel_threads() {
  std::atomic<int> most{0};
  at::parallel_for(0, 1 << 16, 1, [&](int64_t, int64_t) {
    const int mine = at::get_thread_num() + 1;
    int seen = most.load();
    while (mine > seen && !most.compare_exchange_weak(seen, mine)) {
    }
  });
  return most.load();
}

}  // namespace bt::model
