// bench_model [preset=base] [batch=8] [iters=3] [text_len=40] [threads=0]
// Prints the parameter counts of base and large, then times forward + backward of
// BridgeTowerForContrastiveLearning (train mode, random init, random inputs) on CPU: one warm-up step, then
// `iters` timed steps; reports each step and the median seconds per sample.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/api.h"
#include "model/bridgetower.h"

using namespace bt::model;

int main(int argc, char** argv) {
  std::string name = argc > 1 ? argv[1] : "base";
  int batch = argc > 2 ? std::atoi(argv[2]) : 8;
  int iters = argc > 3 ? std::atoi(argv[3]) : 3;
  int text_len = argc > 4 ? std::atoi(argv[4]) : 40;
  int threads = argc > 5 ? std::atoi(argv[5]) : 0;
  configure_torch_threads(threads);
  std::printf("parameters: base %lld, large %lld (BridgeTowerForContrastiveLearning)\n",
              (long long)parameter_count(preset("base")), (long long)parameter_count(preset("large")));
  auto cfg = preset(name);
  torch::manual_seed(0);
  BridgeTowerForContrastiveLearning model(cfg);
  model->train();
  int s = cfg.vision.image_size;
  auto px = torch::randn({batch, 3, s, s});
  auto ids = torch::randint(3, cfg.text.vocab_size, {batch, text_len}, torch::kLong);
  ids.select(1, 0).fill_(cfg.text.bos_token_id);
  auto mask = torch::ones({batch, text_len}, torch::kLong);
  std::vector<double> per_sample;
  for (int i = 0; i <= iters; ++i) {
    model->zero_grad();
    auto t0 = std::chrono::steady_clock::now();
    auto out = model->forward(px, ids, mask, true);
    out.loss.backward();
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s step %d: %.3f s (%.3f s/sample)%s\n", name.c_str(), i, sec, sec / batch, i == 0 ? " warm-up" : "");
    std::fflush(stdout);
    if (i > 0) per_sample.push_back(sec / batch);
  }
  std::sort(per_sample.begin(), per_sample.end());
  if (!per_sample.empty())
    std::printf("%s batch %d, text %d, threads %d: median %.3f s/sample forward+backward\n", name.c_str(), batch,
                text_len, at::get_num_threads(), per_sample[per_sample.size() / 2]);
  return 0;
}
