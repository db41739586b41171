// What each fast path with a fallback took during one run -- the fused AdamW, the CUDA QuickGELU -- for the run's
// summary (TrainSummary::op_paths: bench rows and train_results.json list it). A record belongs to its run (the
// trainer's TrainRun owns one; a bench of many trainings gets a fresh record per training, with nothing to reset),
// never to the process. A run's answer per kernel is the most telling path seen: fast path failed > fast path >
// fallback > nothing ran.
// The optimizer gets its record handed over (AdamWOptions::paths). The model's ops are called from deep in the
// network, so the record they write is the calling thread's current one, installed by ScopedKernelPaths for the
// run's scope; an autograd function keeps the record of its forward for its backward (which CUDA runs on
// autograd's own threads). With no record installed nothing is recorded. Torch-free.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

namespace bt::model {

enum class Kernel : uint8_t { kAdamW, kQuickGelu };
inline constexpr int kKernelCount = 2;

// In increasing order of what a run's summary should say.
enum class KernelPath : int { kNone = 0, kFallback = 1, kFast = 2, kFastFailed = 3 };

class KernelPaths {
 public:
  void record(Kernel k, KernelPath p) {
    auto& slot = paths_[static_cast<int>(k)];
    int seen = slot.load(std::memory_order_relaxed);
    while (seen < static_cast<int>(p) && !slot.compare_exchange_weak(seen, static_cast<int>(p))) {
    }
  }
  KernelPath path(Kernel k) const { return static_cast<KernelPath>(paths_[static_cast<int>(k)].load()); }
  // The words the summaries have always used: AdamW "none" | "foreach" | "fused" | "foreach (fused kernel
  // failed)"; QuickGELU "composite" | "cuda_kernel" | "composite (CUDA kernel failed)".
  std::string name(Kernel k) const {
    static constexpr const char* kNames[kKernelCount][4] = {
        {"none", "foreach", "fused", "foreach (fused kernel failed)"},
        {"composite", "composite", "cuda_kernel", "composite (CUDA kernel failed)"},
    };
    return kNames[static_cast<int>(k)][static_cast<int>(path(k))];
  }

 private:
  std::atomic<int> paths_[kKernelCount]{};
};

namespace detail {
inline KernelPaths*& current_kernel_paths_slot() {
  thread_local KernelPaths* current = nullptr;
  return current;
}
}  // namespace detail

// The record the calling thread's model ops write to (nullptr: none).
inline KernelPaths* current_kernel_paths() { return detail::current_kernel_paths_slot(); }

// Installs `paths` as the calling thread's record while it lives (then the previous one).
class ScopedKernelPaths {
 public:
  explicit ScopedKernelPaths(KernelPaths* paths) : previous_(detail::current_kernel_paths_slot()) {
    detail::current_kernel_paths_slot() = paths;
  }
  ~ScopedKernelPaths() { detail::current_kernel_paths_slot() = previous_; }
  ScopedKernelPaths(const ScopedKernelPaths&) = delete;
  ScopedKernelPaths& operator=(const ScopedKernelPaths&) = delete;

 private:
  KernelPaths* previous_;
};

}  // namespace bt::model
