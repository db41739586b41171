// bench_load_bin names [preset=large]        print "name d0 d1 ..." for every parameter of the contrastive model
// bench_load_bin load DIR [preset=large]     build the model, then time load_weights(DIR) (pytorch_model.bin)
// The load prints one line: seconds, RSS before the load and the peak RSS during it (MB), so extra = peak -
// before is what loading costs above the model itself. Driven by bench/model/load_bin_bench.sh next to Python's
// torch.load (bench/model/load_bin_peer.py) on the same file.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "model/bridgetower.h"
#include "model/runtime.h"

using namespace bt::model;

static double status_mb(const char* field) {  // VmRSS / VmHWM of this process, in MB
  std::ifstream f("/proc/self/status");
  std::string key;
  double kb = 0;
  while (f >> key) {
    if (key == field) {
      f >> kb;
      return kb / 1024.0;
    }
    f.ignore(1 << 12, '\n');
  }
  return 0;
}

int main(int argc, char** argv) {
  bt::model::init_runtime();  // as bridgetune runs (model/runtime.h): its allocator policy shapes the peak measured
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "names") {
    BridgeTowerForContrastiveLearning m(preset(argc > 2 ? argv[2] : "large"), torch::TensorOptions().device(torch::kMeta));
    for (auto& kv : m->named_parameters(true)) {
      std::printf("%s", kv.key().c_str());
      for (auto d : kv.value().sizes()) std::printf(" %lld", static_cast<long long>(d));
      std::printf("\n");
    }
    return 0;
  }
  if (mode != "load" || argc < 3) {
    std::fprintf(stderr, "usage: bench_load_bin names [preset] | load DIR [preset]\n");
    return 2;
  }
  torch::set_num_threads(1);
  BridgeTowerForContrastiveLearning m(preset(argc > 3 ? argv[3] : "large"));
  const double before = status_mb("VmRSS:");
  auto t0 = std::chrono::steady_clock::now();
  m->load_weights(argv[2], true);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("bridgetune load_weights: %.2f s, rss before %.0f MB, peak %.0f MB, extra %.0f MB\n", s, before,
              status_mb("VmHWM:"), status_mb("VmHWM:") - before);
  return 0;
}
