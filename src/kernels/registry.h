// The kernels' registry: kKernelTable, one line per kernel (its id, its name, the words a run's summary uses for
// the path it took, the switch that turns its fast path off), and the per-run record of the paths taken.
//
// README -- to add a kernel: a folder src/kernels/<name>/ with
//   <name>.h      the op as the model calls it, and its fallback (the composite torch ops), in bt::kernels;
//   <name>.cpp    the autograd function, the CPU kernel (BT_CPU_KERNEL loops, kernels/bf16.h, kernels/fast_exp.h)
//                 and the choice between fast path and fallback, recording the path taken (below);
//   <name>.cu + <name>_cuda.h   a CUDA kernel, if any: raw pointers and a stream, the CUDA runtime only (compiled
//                 into bt_cuda), hooked into the op by kernels/cuda_ops.cpp;
// its id in Kernel and one line in kKernelTable. CMake picks the folder's files up by itself (src/kernels/ and
// src/cuda/CMakeLists.txt); its tests go to tests/kernels/<name>_test.cpp. A fast path's switch is a line of
// common/runtime.h's kRuntimeSwitchTable, read through bt::runtime_switches(), never getenv.
//
// The record, KernelPaths: what each fast path with a fallback took during one run -- the fused AdamW, the CUDA
// QuickGELU -- for the run's summary (TrainSummary::op_paths: bench rows and train_results.json list it). A record
// belongs to its run (the trainer's TrainRun owns one; a bench of many trainings gets a fresh record per training,
// with nothing to reset), never to the process. A run's answer per kernel is the most telling path seen: fast path
// failed > fast path > fallback > nothing ran.
// The optimizer gets its record handed over (AdamWOptions::paths). The model's ops are called from deep in the
// network, so the record they write is the calling thread's current one, installed by ScopedKernelPaths for the
// run's scope; an autograd function keeps the record of its forward for its backward (which CUDA runs on
// autograd's own threads). With no record installed nothing is recorded. Torch-free.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "common/runtime.h"

namespace bt::kernels {

// In the order of kKernelTable.
enum class Kernel : uint8_t { kAdamW, kQuickGelu, kGemm, kAttentionProbs, kDropout, kBf16Cast };

// In increasing order of what a run's summary should say.
enum class KernelPath : int { kNone = 0, kFallback = 1, kFast = 2, kFastFailed = 3 };

struct KernelSpec {
  Kernel id;
  const char* name;      // its folder under src/kernels/
  // The summary's word for each KernelPath (none, fallback, fast, fast failed); all null: the kernel records no path
  // (the path follows each call's device and dtype, as its header says).
  const char* paths[4];
  const char* switch_name;  // the line of common/runtime.h's kRuntimeSwitchTable that turns it off, or null
};

inline constexpr KernelSpec kKernelTable[] = {
    // The fused AdamW update (aten::_fused_adamw_): its path is chosen in train/torch/optim.cpp, the optimizer.
    {Kernel::kAdamW, "adamw", {"none", "foreach", "fused", "foreach (fused kernel failed)"}, "BRIDGETUNE_FUSED_OPS"},
    {Kernel::kQuickGelu, "quick_gelu", {"composite", "composite", "cuda_kernel", "composite (CUDA kernel failed)"},
     "BRIDGETUNE_FUSED_OPS"},
    {Kernel::kGemm, "gemm", {}, "BRIDGETUNE_CPU_GEMM"},  // this process's path: cpu_gemm_name(), cpu_bf16_gemm_name()
    {Kernel::kAttentionProbs, "attention_probs", {}, nullptr},
    {Kernel::kDropout, "dropout", {}, nullptr},
    {Kernel::kBf16Cast, "bf16_cast", {}, nullptr},
};
inline constexpr int kKernelCount = static_cast<int>(std::size(kKernelTable));

// The table's lines are in Kernel's order, and every switch it names is a line of kRuntimeSwitchTable.
constexpr bool kernel_table_consistent() {
  for (int i = 0; i < kKernelCount; ++i) {
    if (static_cast<int>(kKernelTable[i].id) != i) return false;
    if (const char* sw = kKernelTable[i].switch_name) {
      bool known = false;
      for (const RuntimeSwitchSpec& r : kRuntimeSwitchTable) known = known || std::string_view(r.name) == sw;
      if (!known) return false;
    }
  }
  return true;
}
static_assert(kernel_table_consistent(), "kKernelTable: one line per Kernel, in order; switches of the runtime table");

class KernelPaths {
 public:
  void record(Kernel k, KernelPath p) {
    auto& slot = paths_[static_cast<int>(k)];
    int seen = slot.load(std::memory_order_relaxed);
    while (seen < static_cast<int>(p) && !slot.compare_exchange_weak(seen, static_cast<int>(p))) {
    }
  }
  KernelPath path(Kernel k) const { return static_cast<KernelPath>(paths_[static_cast<int>(k)].load()); }
  // The table's word for k's path ("" for a kernel that records none). The words the summaries have always used:
  // AdamW "none" | "foreach" | "fused" | "foreach (fused kernel failed)"; QuickGELU "composite" | "cuda_kernel" |
  // "composite (CUDA kernel failed)".
  std::string name(Kernel k) const {
    const char* word = kKernelTable[static_cast<int>(k)].paths[static_cast<int>(path(k))];
    return word ? word : "";
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

}  // namespace bt::kernels
