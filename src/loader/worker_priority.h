// The loader's decode workers must not slow the training step: on a GPU the step is one thread launching kernels,
// and 8 busy decode threads contending with it for the CPU cost up to a quarter of the step rate on the H200 (issue
// 46: the "workers 8" row read 235, 178 and 168 samples/s with < 1 % data wait). Workers are throughput work with
// batches buffered ahead (prefetch), the launcher is latency work: so the workers run at a lower priority (a higher
// nice value), and optionally off the first CPU of the process's set, which they leave to the launching thread.
//   nice: added to the creating thread's nice value (as `nice -n N`), at most 19; 0 leaves it. Raising one's own
//   nice value needs no privilege (Linux: setpriority(PRIO_PROCESS, tid) is per thread).
//   affinity: when the process may run on more CPUs than there are workers, each worker's set is the process's
//   set without its first CPU (a nudge: the launcher itself is not pinned, so the kernel keeps it where it is free).
// Defaults (default_worker_nice): 5 when the step runs on CUDA; 0 on the CPU, where the step is itself CPU work on
// torch's threads and the thread rule (model/api.h torch_threads_for) already splits the cores: a lower priority
// there would only let the step's threads starve the loader into data wait.
// Never fails a run: a thread whose priority cannot change keeps working and the reason is returned.
#pragma once
#include <string>

namespace bt::loader {

struct WorkerPriority {
  int nice = 0;           // 0..19 added to the nice value of the thread that starts the workers
  bool affinity = false;  // keep the workers off the first CPU of the process's set (see above)
};

inline int default_worker_nice(bool step_on_cuda) { return step_on_cuda ? 5 : 0; }

// Applies p to the calling thread (a worker of `workers`). "" when done (or nothing to do), else why not.
std::string apply_worker_priority(const WorkerPriority& p, int workers);

// The calling thread's nice value (getpriority on its thread id).
int current_thread_nice();

}  // namespace bt::loader
