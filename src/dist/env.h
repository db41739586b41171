// The distributed launch environment as torchrun (torch.distributed.run, 1.13) sets it for each worker:
// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, plus TORCHELASTIC_USE_AGENT_STORE
// and TORCHELASTIC_RESTART_COUNT. Torch-free (no libtorch needed to read it).
//
// Contract:
//  - No RANK and no WORLD_SIZE (or WORLD_SIZE=1): a single process, world_size 1, nothing else required.
//  - WORLD_SIZE > 1: RANK, MASTER_ADDR and MASTER_PORT must be set and valid; LOCAL_RANK / LOCAL_WORLD_SIZE
//    default to RANK / WORLD_SIZE (one node). Any malformed or inconsistent value -> bt::Error naming the
//    variable and what to fix.
//  - agent_store: torchrun's static rendezvous (the default, also with --nnodes/--node_rank) already hosts a
//    TCPStore on MASTER_ADDR:MASTER_PORT in the launcher of node 0 and says so with
//    TORCHELASTIC_USE_AGENT_STORE=True: every rank, rank 0 included, must then connect as a client, under the
//    key prefix "/worker/attempt_<restart_count>". Otherwise (--standalone, --rdzv_backend c10d, or processes
//    started by hand) rank 0 hosts the store.
#pragma once
#include <functional>
#include <string>

namespace bt::dist {

struct DistEnv {
  int rank = 0, world_size = 1;
  int local_rank = 0, local_world_size = 1;
  std::string master_addr;
  int master_port = 0;
  bool agent_store = false;  // connect to the launcher's store instead of hosting one on rank 0
  int restart_count = 0;

  bool distributed() const { return world_size > 1; }
  bool is_main() const { return rank == 0; }
  std::string describe() const;  // one line, for logs
};

// Reads the variables through `get` (returns nullptr when unset); the default reads the process environment.
using EnvGetter = std::function<const char*(const char*)>;
DistEnv read_env(const EnvGetter& get = {});

// torchrun's agent hosts its store before it starts any rank, so a rank that cannot connect to it (retrying every
// 100 ms for `seconds`) has outlived its launcher -- SIGKILLed while this process was still loading, before the
// parent-death signal was set. "" once a TCP connection is made, else why not ("Connection refused").
std::string store_unreachable(const std::string& addr, int port, double seconds);

}  // namespace bt::dist
