// bench_quick_gelu [rows=884] [cols=4096] [rounds=15] [threads=0] [dtype=float|bf16]
// Forward + backward of QuickGELU on a [rows, cols] activation (default: 2 images x 442 tokens x 4096, one
// large-preset vision MLP), the fused autograd function (kernels/quick_gelu/quick_gelu.h) against the composite
// x * sigmoid(1.702 x) under autograd, interleaved round by round; prints each side's median ms and the ratio.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "interleaved.h"
#include "kernels/quick_gelu/quick_gelu.h"
#include "model/api.h"
#include "model/runtime.h"

using namespace bt::kernels;

int main(int argc, char** argv) {
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 884, cols = argc > 2 ? std::atoll(argv[2]) : 4096;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 15;
  bt::model::init_runtime({.torch_threads = argc > 4 ? std::atoi(argv[4]) : 0});  // as bridgetune runs (model/runtime.h)
  const std::string dt = argc > 5 ? argv[5] : "float";
  const auto type = dt == "bf16" ? torch::kBFloat16 : torch::kFloat;
  torch::manual_seed(0);
  const auto x0 = torch::randn({rows, cols}).to(type), w = torch::randn({rows, cols}).to(type);
  auto time_one = [&](bool fused) {
    auto x = x0.clone().requires_grad_(true);
    const auto t0 = std::chrono::steady_clock::now();
    auto y = fused ? quick_gelu(x) : quick_gelu_reference(x);
    y.backward(w);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  const auto [f, c] = bt::bench::interleaved_medians(rounds, time_one);
  std::printf("{\"bench\": \"quick_gelu fwd+bwd\", \"shape\": [%lld, %lld], \"dtype\": \"%s\", \"threads\": %d, "
              "\"rounds\": %d, \"fused_ms\": %.2f, \"composite_ms\": %.2f, \"speedup\": %.2f}\n",
              (long long)rows, (long long)cols, dt.c_str(), torch::get_num_threads(), rounds, f, c, c / f);
  return 0;
}
