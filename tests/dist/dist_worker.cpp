// One rank of a test job, started by launch() (or torchrun) with the torchrun environment.
//   dist_worker toy OUT GATHER OVERLAP ACCUM    toy training run -> OUT (toy.h's result file)
//   dist_worker die                             rank 1 SIGKILLs itself after one all_reduce; rank 0 keeps going
//   dist_worker hang                            rank 1 stops taking part (sleeps); rank 0 keeps going
//   dist_worker bt FIXTURE OUT GATHER           tiny BridgeTower: loss + gradients of one step -> OUT
// BT_DDP_TIMEOUT (seconds, default 20) is the process-group timeout. Errors: "error: ..." and exit code 1.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "dist/env.h"
#include "dist/process_group.h"
#include "model/runtime.h"
#include "toy.h"

namespace bt::dist::testing {
int run_bt_worker(Group& g, const std::string& fixture, const std::string& out, bool gather);  // worker_bt.cpp
}

namespace {

using namespace bt::dist;

// "{rank}" in an output path -> this rank (torchrun gives every rank the same arguments).
std::string with_rank(std::string p, int rank) {
  if (const auto at = p.find("{rank}"); at != std::string::npos) p.replace(at, 6, std::to_string(rank));
  return p;
}

int run(int argc, char** argv) {
  if (argc < 2) bt::fail("usage: dist_worker toy|die|hang|bt ...");
  const std::string what = argv[1];
  GroupOptions go;
  if (const char* t = std::getenv("BT_DDP_TIMEOUT")) go.timeout_s = std::atof(t);
  else go.timeout_s = 20;
  auto g = init_process_group(read_env(), go);
  if (what == "toy" && argc == 6) {
    testing::ToySpec s;
    s.gather = std::string(argv[3]) == "1";
    s.overlap = std::string(argv[4]) == "1";
    s.accum = std::atoi(argv[5]);
    testing::write_result(with_rank(argv[2], g->rank()), testing::run_toy_rank(*g, s));
    return 0;
  }
  if (what == "die" || what == "hang") {
    g->all_reduce_sum(1.0);
    if (g->rank() == 1) {
      std::fprintf(stderr, "rank 1: %s now\n", what == "die" ? "dying" : "hanging");
      if (what == "die") ::raise(SIGKILL);
      ::sleep(static_cast<unsigned>(go.timeout_s * 3 + 1));  // outlive rank 0's timeout, then fail too
    }
    for (int i = 0; i < 100000; ++i) {
      g->all_reduce_sum(1.0);
      ::usleep(1000);
    }
    std::fprintf(stderr, "rank %d: no collective failed\n", g->rank());
    return 0;
  }
  if (what == "bt" && argc == 5)
    return testing::run_bt_worker(*g, argv[2], with_rank(argv[3], g->rank()), std::string(argv[4]) == "1");
  bt::fail("dist_worker: bad arguments for '", what, "'");
}

}  // namespace

int main(int argc, char** argv) {
  bt::model::init_runtime();  // a rank runs as a bridgetune rank (model/runtime.h)
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
