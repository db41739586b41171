// bench_dist [batch=8] [steps=12] [gather=1]
// Scaling of data-parallel training on this machine: the tiny BridgeTower preset (random init, random inputs,
// AdamW) trained by 1 process and by 2 processes (Gloo on loopback, gradients averaged by GradientSync, embeddings
// gathered when gather=1), each process at per-device batch `batch`. Prints global samples/s for
//   1 proc x 1 thread, 1 proc x 2 threads, 2 procs x 1 thread
// and the scaling efficiency  sps(2 procs) / (2 x sps(1 proc x 1 thread)), plus the share of step time spent
// waiting for gradient communication. The first 3 steps are warm-up and not timed.
// Internally re-runs itself as the ranks (BT_BENCH_DIST_WORKER=1).
#include <unistd.h>

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "dist/env.h"
#include "dist/gather.h"
#include "dist/grad_sync.h"
#include "dist/process_group.h"
#include "launch.h"
#include "model/bridgetower.h"
#include "model/contrastive_loss.h"
#include "model/runtime.h"

using namespace bt;

namespace {

constexpr int kWarmup = 3, kSeq = 24;

int worker(int batch, int steps, bool gather) {
  auto g = dist::init_process_group(dist::read_env(), dist::GroupOptions{60});
  torch::manual_seed(0);
  auto cfg = model::preset("tiny");
  model::BridgeTowerForContrastiveLearning m(cfg);
  m->train();
  auto params = m->parameters();
  dist::GradientSync sync(*g, params);
  sync.broadcast_parameters();
  torch::optim::AdamW opt(params, torch::optim::AdamWOptions(1e-4));
  torch::manual_seed(100 + g->rank());
  const int S = cfg.vision.image_size;
  auto pixels = torch::randn({batch, 3, S, S});
  auto ids = torch::randint(3, cfg.text.vocab_size, {batch, kSeq}, torch::kLong);
  auto mask = torch::ones({batch, kSeq}, torch::kLong);
  double comm = 0, t_start = 0;
  using Clock = std::chrono::steady_clock;
  auto now = [] { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); };
  for (int s = 0; s < kWarmup + steps; ++s) {
    if (s == kWarmup) {
      g->barrier();
      t_start = now();
      comm = 0;
    }
    sync.arm();
    auto o = m->forward(pixels, ids, mask, false);
    auto all = [&](const torch::Tensor& t) { return gather ? dist::gather_with_grad(*g, t) : t; };
    auto loss = model::contrastive_loss(all(o.text_embeds), all(o.image_embeds), all(o.cross_embeds), m->logit_scale);
    loss.backward();
    sync.finish();
    comm += sync.last_wait_s();
    opt.step();
    opt.zero_grad();
  }
  g->barrier();
  const double wall = now() - t_start;
  const double sps = static_cast<double>(steps) * batch * g->world_size() / wall;
  const double comm_mean = g->all_reduce_mean(comm);
  if (g->is_main())
    std::printf("RESULT %.3f %.4f %zu\n", sps, comm_mean / wall, sync.bucket_count());
  return 0;
}

struct Run {
  double sps = 0, comm_share = 0;
  size_t buckets = 0;
};

Run run(int procs, int threads, int batch, int steps, bool gather) {
  dist::testing::LaunchSpec ls;
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) bt::fail("cannot find /proc/self/exe");
  self[n] = 0;
  ls.exe = self;
  ls.args = {std::to_string(batch), std::to_string(steps), gather ? "1" : "0"};
  ls.world_size = procs;
  ls.deadline_s = 600;
  ls.extra_env = {{"BT_BENCH_DIST_WORKER", "1"}, {"OMP_NUM_THREADS", std::to_string(threads)}};
  auto rs = dist::testing::launch(ls);
  Run r;
  for (size_t i = 0; i < rs.size(); ++i)
    if (rs[i].exit_code != 0) bt::fail("rank ", i, " failed:\n", rs[i].output);
  const auto at = rs[0].output.find("RESULT ");
  if (at == std::string::npos || std::sscanf(rs[0].output.c_str() + at, "RESULT %lf %lf %zu", &r.sps, &r.comm_share,
                                             &r.buckets) != 3)
    bt::fail("no result from rank 0:\n", rs[0].output);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const int batch = argc > 1 ? std::atoi(argv[1]) : 8;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 12;
  const bool gather = argc > 3 ? std::atoi(argv[3]) != 0 : true;
  try {
    if (std::getenv("BT_BENCH_DIST_WORKER")) {
      const char* t = std::getenv("OMP_NUM_THREADS");
      bt::model::init_runtime({.torch_threads = t ? std::max(1, std::atoi(t)) : 1});  // as a bridgetune rank runs
      return worker(batch, steps, gather);
    }
    std::printf("tiny preset, per-process batch %d, %d timed steps (+%d warm-up), gather_embeddings %d, AdamW\n",
                batch, steps, kWarmup, gather ? 1 : 0);
    const Run a = run(1, 1, batch, steps, gather);
    const Run b = run(1, 2, batch, steps, gather);
    const Run c = run(2, 1, batch, steps, gather);
    std::printf("| processes x threads | global batch | samples/s | gradient-wait share |\n|---|---|---|---|\n");
    std::printf("| 1 x 1 | %d | %.1f | - |\n", batch, a.sps);
    std::printf("| 1 x 2 | %d | %.1f | - |\n", batch, b.sps);
    std::printf("| 2 x 1 (gloo, %zu buckets) | %d | %.1f | %.1f %% |\n", c.buckets, 2 * batch, c.sps,
                100 * c.comm_share);
    std::printf("scaling efficiency 2 procs vs 1 proc x 1 thread: %.1f %%; vs 1 proc x 2 threads: %.1f %%\n",
                100 * c.sps / (2 * a.sps), 100 * c.sps / (2 * b.sps));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
