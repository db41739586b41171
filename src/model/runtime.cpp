// Thread configuration for torch. Kept out of the torch/torch.h translation units: ATen/Parallel.h is cheap.
#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <thread>

namespace bt::model {

void configure_torch_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(n);
  // Debian's libtorch may call into OpenBLAS, whose own pool would oversubscribe torch's threads.
  using SetThreads = void (*)(int);
  if (auto fn = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) fn(1);
}

}  // namespace bt::model
