// bench_model [preset=base] [batch=8] [iters=3] [text_len=40] [threads=0] [bf16=0] [trace=] [mode=train]
// Prints the parameter counts of base and large, then times forward + backward of
// BridgeTowerForContrastiveLearning (train mode, random init, random inputs) on CPU: one warm-up step, then
// `iters` timed steps; reports each step and the median seconds per sample, wall and CPU (the CPU figure, summed
// over threads, stays meaningful when other jobs share the machine). bf16=1: under bf16 autocast, as --bf16.
// trace=PATH: one more step under libtorch's profiler, written as a chrome trace; bench/model/op_profile.py turns
// it into a table of where the step's time goes (self time per op). mode=infer: the forward alone in eval mode
// without autograd (what evaluate/encode run) instead of forward + backward.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <torch/csrc/autograd/profiler_legacy.h>

#include <optional>

#include "common/process_memory.h"
#include "kernels/autocast.h"
#include "model/api.h"
#include "model/bridgetower.h"
#include "model/runtime.h"

using namespace bt::kernels;  // AutocastScope
using namespace bt::model;

static double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char** argv) {
  std::string name = argc > 1 ? argv[1] : "base";
  int batch = argc > 2 ? std::atoi(argv[2]) : 8;
  int iters = argc > 3 ? std::atoi(argv[3]) : 3;
  int text_len = argc > 4 ? std::atoi(argv[4]) : 40;
  int threads = argc > 5 ? std::atoi(argv[5]) : 0;
  const bool bf16 = argc > 6 && std::atoi(argv[6]) != 0;
  const std::string trace = argc > 7 ? argv[7] : "";
  const bool infer = argc > 8 && std::string(argv[8]) == "infer";
  bt::model::init_runtime({.torch_threads = threads});  // as bridgetune runs (model/runtime.h)
  std::printf("parameters: base %lld, large %lld (BridgeTowerForContrastiveLearning)\n",
              (long long)parameter_count(preset("base")), (long long)parameter_count(preset("large")));
  auto cfg = preset(name);
  torch::manual_seed(0);
  BridgeTowerForContrastiveLearning model(cfg);
  if (infer) model->eval();
  else model->train();
  int s = cfg.vision.image_size;
  auto px = torch::randn({batch, 3, s, s});
  auto ids = torch::randint(3, cfg.text.vocab_size, {batch, text_len}, torch::kLong);
  ids.select(1, 0).fill_(cfg.text.bos_token_id);
  auto mask = torch::ones({batch, text_len}, torch::kLong);
  std::vector<double> per_sample, cpu_per_sample;
  auto step = [&] {
    if (infer) {
      torch::NoGradGuard no_grad;
      AutocastScope autocast(bf16, torch::Device(torch::kCPU));
      model->forward(px, ids, mask, false);
      return;
    }
    model->zero_grad();
    std::optional<AutocastScope> autocast;
    autocast.emplace(bf16, torch::Device(torch::kCPU));
    auto out = model->forward(px, ids, mask, true);
    autocast.reset();  // backward runs outside autocast, as in the trainer
    out.loss.backward();
  };
  for (int i = 0; i <= iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = cpu_seconds();
    const long faults0 = bt::minor_page_faults();
    step();
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double cpu = cpu_seconds() - c0;
    std::printf("%s step %d: %.3f s (%.3f s/sample wall, %.3f CPU-s/sample, %ld page faults)%s\n", name.c_str(), i,
                sec, sec / batch, cpu / batch, bt::minor_page_faults() - faults0, i == 0 ? " warm-up" : "");
    std::fflush(stdout);
    if (i > 0) {
      per_sample.push_back(sec / batch);
      cpu_per_sample.push_back(cpu / batch);
    }
  }
  if (!per_sample.empty())
    std::printf("%s batch %d, text %d, threads %d, %s: median %.3f s/sample wall, %.3f CPU-s/sample %s\n",
                name.c_str(), batch, text_len, at::get_num_threads(), bf16 ? "bf16" : "fp32", median(per_sample),
                median(cpu_per_sample), infer ? "forward (eval, no autograd)" : "forward+backward");
  if (!trace.empty()) {
    const long faults0 = bt::minor_page_faults();
    {
      torch::autograd::profiler::RecordProfile profile(trace);
      step();
    }
    std::printf("profile of one step (%ld page faults): %s\n", bt::minor_page_faults() - faults0, trace.c_str());
  }
  return 0;
}
