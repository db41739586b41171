// bench_attention_probs [batch=8] [heads=4] [rows=325] [keys=325] [dropout=0.1] [mask=0|1] [rounds=15] [threads=0]
//                       [forward]
// Forward + backward (forward: the forward alone, without autograd) of the attention weights dropout(softmax(q k^T / 8 + mask)) for bf16 q, k [B, H, L|S, 64]
// (default: the small preset's image self-attention at batch 8), the fused path (kernels/attention_probs/attention_probs.h) against
// the composite ops, interleaved round by round; prints each side's median ms and the ratio. The q k^T products
// are in both sides' times.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "interleaved.h"
#include "kernels/attention_probs/attention_probs.h"
#include "model/api.h"
#include "model/runtime.h"

using namespace bt::kernels;

int main(int argc, char** argv) {
  auto arg = [&](int i, int64_t d) { return argc > i ? std::atoll(argv[i]) : d; };
  const int64_t b = arg(1, 8), h = arg(2, 4), l = arg(3, 325), s = arg(4, 325);
  const double p = argc > 5 ? std::atof(argv[5]) : 0.1;
  const bool masked = arg(6, 0) != 0;
  const int rounds = static_cast<int>(arg(7, 15));
  const bool forward_only = argc > 9 && std::string(argv[9]) == "forward";
  bt::model::init_runtime({.torch_threads = static_cast<int>(arg(8, 0))});  // as bridgetune runs (model/runtime.h)
  torch::manual_seed(0);
  const auto q0 = torch::randn({b, h, l, 64}).to(torch::kBFloat16);
  const auto k0 = torch::randn({b, h, s, 64}).to(torch::kBFloat16);
  const auto lowest = std::numeric_limits<float>::lowest();
  const auto mask = masked ? (torch::rand({b, 1, 1, s}) < 0.2).to(torch::kFloat) * lowest : torch::Tensor();
  const auto w = torch::randn({b, h, l, s});
  auto time_one = [&](bool fused) {
    auto q = q0.clone().requires_grad_(!forward_only), k = k0.clone().requires_grad_(!forward_only);
    torch::AutoGradMode grad(!forward_only);
    const auto t0 = std::chrono::steady_clock::now();
    auto y = fused ? attention_weights(q, k, mask, p, true) : attention_weights_composite(q, k, mask, p, true);
    if (!forward_only) y.backward(w.to(y.scalar_type()));
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  const auto [f, c] = bt::bench::interleaved_medians(rounds, time_one);
  std::printf("{\"bench\": \"attention weights %s (bf16)\", \"shape\": [%lld, %lld, %lld, %lld], \"dropout\": %g, "
              "\"mask\": %s, \"threads\": %d, \"rounds\": %d, \"fused_ms\": %.2f, \"composite_ms\": %.2f, "
              "\"speedup\": %.2f}\n",
              forward_only ? "forward" : "fwd+bwd", (long long)b, (long long)h, (long long)l, (long long)s, p,
              masked ? "true" : "false", torch::get_num_threads(), rounds, f, c, c / f);
  return 0;
}
