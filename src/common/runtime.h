// The process's runtime, set up once, first thing, by every binary that runs the model (bridgetune, the benches,
// the test mains): the allocator policy, torch's threads, OpenBLAS pinned to one thread, and every environment
// switch bridgetune reads, read here once into RuntimeSwitches. Kernels read runtime_switches(), never getenv.
// bt::init_runtime is the torch-free part; bt::model::init_runtime (model/runtime.h) adds torch's allocator and
// threads, and is what a binary linking bt_model calls. The switches, one prefix (BRIDGETUNE_), are the table
// kRuntimeSwitchTable below -- the one list (README, docs/RUNTIME.md). Variables of other tools bridgetune honours
// (ONEDNN_MAX_CPU_ISA, torchrun's RANK/WORLD_SIZE/..., HF_HOME, MLFLOW_TRACKING_URI) keep their own names.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bt {

enum class FusedOps : uint8_t {
  kOn,    // the fused kernels where they apply (CUDA QuickGELU, aten::_fused_adamw_)
  kOff,   // the composite ops and the _foreach_ AdamW: the A/B switch of the GPU check
  kFail,  // fault injection: every fast path is taken on any device and throws at its first call
};

// Every switch, with its default. Trivially copyable and 4 bytes: read and replaced whole, lock-free (std::atomic).
struct alignas(4) RuntimeSwitches {
  bool keep_freed_memory = true;       // BRIDGETUNE_KEEP_FREED_MEMORY
  bool cpu_gemm_onednn = true;         // BRIDGETUNE_CPU_GEMM
  FusedOps fused_ops = FusedOps::kOn;  // BRIDGETUNE_FUSED_OPS
  uint8_t max_threads = 0;             // BRIDGETUNE_MAX_THREADS: torch's intra-op threads at most (0: no cap)
};

struct RuntimeSwitchSpec {
  const char* name;
  const char* default_value;
  const char* values;
  const char* what;
  const char* deprecated_alias;  // an older name still read (one warning line), or nullptr
};

// The table: name, default, values, what it does (README and docs/RUNTIME.md list these lines).
inline constexpr RuntimeSwitchSpec kRuntimeSwitchTable[] = {
    {"BRIDGETUNE_KEEP_FREED_MEMORY", "1", "1 | 0",
     "1: freed memory stays in the allocator for the next block of its size (glibc mallopt, torch's CPU tensors "
     "from a reusing allocator: a third of a base CPU step went to page faults without); 0: glibc and c10 as they "
     "come (the A/B switch of bench/model/step_hf_bench.py)",
     nullptr},
    {"BRIDGETUNE_CPU_GEMM", "onednn", "onednn | torch",
     "onednn: CPU Linear/attention products call oneDNN's GEMMs directly (bf16 emulated on sgemm where the CPU has "
     "no bf16 GEMM); torch: libtorch's own ops, for A/B runs",
     nullptr},
    {"BRIDGETUNE_FUSED_OPS", "1", "1 | 0 | fail",
     "1: the fused kernels (CUDA QuickGELU, fused AdamW) where they apply; 0: the composite ops and the _foreach_ "
     "AdamW; fail: fault injection, every fast path is taken and fails once, to see the fallbacks work",
     "BT_FUSED_OPS"},
    {"BRIDGETUNE_MAX_THREADS", "0", "0 | 1..255",
     "torch's intra-op threads at most this many, whatever a command or --torch_threads picks (0: no cap); a "
     "shared machine's share, or one fixed GEMM reduction order (the suite runs at 1 and 2 to prove it needs none)",
     nullptr},
};

// The switches from `env` (a getenv). Unknown values keep the default; each such value and each deprecated name
// in use adds one line to `warnings` (when given).
using EnvLookup = std::function<const char*(const char*)>;
RuntimeSwitches read_runtime_switches(const EnvLookup& env, std::vector<std::string>* warnings = nullptr);

// The process's switches: set by init_runtime, else read from the environment at the first call (warnings
// printed once, on stderr).
RuntimeSwitches runtime_switches();

// Tests: the switches while this object lives (then the previous ones), instead of setenv. Not for concurrent
// use with another override.
class ScopedRuntimeSwitches {
 public:
  explicit ScopedRuntimeSwitches(const RuntimeSwitches& s);
  ~ScopedRuntimeSwitches();
  ScopedRuntimeSwitches(const ScopedRuntimeSwitches&) = delete;
  ScopedRuntimeSwitches& operator=(const ScopedRuntimeSwitches&) = delete;

 private:
  RuntimeSwitches previous_;
};

struct RuntimeOptions {
  // torch's intra-op threads: < 0 leaves torch's default (commands then decide per model, model::torch_threads_for),
  // 0 every core, > 0 that many. Used by model::init_runtime only.
  int torch_threads = -1;
};

// Torch-free part, idempotent for the switches (read once): reads the switches from the environment (warnings on
// stderr), sets glibc's allocator policy (keep_freed_memory: mallopt, common/process_memory.h) and pins OpenBLAS,
// if loaded, to one thread (OPENBLAS_NUM_THREADS=1: its own pool would oversubscribe torch's threads).
void init_runtime(const RuntimeOptions& options = {});

// The cores this process may run on: its CPU affinity mask (taskset, a container's or SLURM's cpuset), at least 1.
int available_cores();

// n threads under the BRIDGETUNE_MAX_THREADS cap (n itself when no cap is set).
int capped_threads(int n);

// OpenBLAS, if this process has loaded it, runs on one thread.
void pin_openblas_to_one_thread();

}  // namespace bt
