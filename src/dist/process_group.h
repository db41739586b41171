// A c10d process group for data-parallel training: Gloo on CPU (builds that found Gloo; BT_DIST_HAVE_GLOO), NCCL
// for CUDA tensors (only in builds against a CUDA libtorch; BT_DIST_HAVE_NCCL). A build with neither still trains
// one process; init_process_group then fails for WORLD_SIZE > 1 with a message naming what to install.
// Rendezvous through c10d's TCPStore at MASTER_ADDR:MASTER_PORT, as torchrun
// sets it up (see env.h for who hosts the store).
//
// Contract:
//  - init_process_group(env with world_size 1) builds no c10d object at all: every collective returns at once
//    (identity), barrier() is a no-op; the trainer needs no `if`.
//  - Every collective must be called by all ranks in the same order with same-shaped tensors (c10d's rule).
//  - A collective that fails (a peer died: its sockets close) throws bt::Error naming this rank, the operation
//    and the likely cause. One that makes no progress for timeout_s (a peer hung) fails the same way through
//    c10d's timeout; should c10d itself stay stuck, a watchdog thread prints a clear message and ends the
//    process with exit code 3 after timeout_s + 10 s. After a failure the group is dead: later calls throw.
//  - Not thread-safe: call from one thread (the training loop); GradientSync's hooks run on that thread too.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "dist/env.h"

namespace bt::dist {

struct GroupOptions {
  double timeout_s = 1800;     // --ddp_timeout (HF's default: 1800 s); rendezvous and every collective
  bool cuda = false;           // the run's --device: cpu -> Gloo, cuda -> NCCL (a CUDA libtorch build), as HF
  bool watchdog = true;
};

class Group {
 public:
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  bool distributed() const { return env_.world_size > 1; }
  // Only rank 0 writes checkpoints, metrics and logs.
  bool is_main() const { return env_.rank == 0; }
  const DistEnv& env() const { return env_; }
  const std::string& backend() const { return backend_; }  // "gloo", "nccl", or "none" (world_size 1)
  double timeout_s() const { return options_.timeout_s; }

  void barrier();
  // In-place sum over ranks (any dtype c10d supports; dense, contiguous).
  void all_reduce_sum_(at::Tensor& t);
  void all_reduce_sum_(std::vector<at::Tensor>& ts);  // one collective per tensor, all in flight at once
  // Scalars, for logging (mean loss over ranks) and counting global samples.
  double all_reduce_sum(double x);
  double all_reduce_mean(double x) { return all_reduce_sum(x) / world_size(); }
  std::vector<double> all_reduce_sum(const std::vector<double>& xs);
  // Copies root's values into `ts` on every rank (in place, in ~25 MB flattened buckets).
  void broadcast_(const std::vector<at::Tensor>& ts, int root = 0);
  // cat over ranks along dim 0 of equal-shaped tensors; no gradient (see gather.h for the autograd version).
  at::Tensor all_gather_cat(const at::Tensor& t);

  // Asynchronous in-place sum for GradientSync; wait() throws like the synchronous calls.
  class Pending {
   public:
    virtual ~Pending() = default;
    virtual void wait() = 0;
  };
  std::unique_ptr<Pending> all_reduce_sum_async(at::Tensor& t, const char* what);

  struct Impl;

 private:
  friend std::unique_ptr<Group> init_process_group(const DistEnv&, const GroupOptions&);
  Group(DistEnv env, GroupOptions o);
  DistEnv env_;
  GroupOptions options_;
  std::string backend_ = "none";
  std::unique_ptr<Impl> impl_;
};

// Rendezvous with the other ranks (blocks until all WORLD_SIZE have joined, or timeout_s -> bt::Error).
std::unique_ptr<Group> init_process_group(const DistEnv& env, const GroupOptions& options = {});

// True when this build can make NCCL groups (a CUDA libtorch with c10d NCCL).
bool have_nccl();
// True when this build can make Gloo groups (the Gloo headers and library were found; Debian: libgloo-dev).
bool have_gloo();

}  // namespace bt::dist
