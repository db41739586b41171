// model/runtime.cpp: the CPU tensor allocator -- a freed tensor's memory goes to the next tensor of its size, so a
// training step's activations do not land on fresh pages the kernel must fault in (c10's posix_memalign-based
// allocator never reuses a freed block for a same-sized request under glibc 2.36); and its kernels use torch's threads.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>

#include "common/process_memory.h"
#include "model/api.h"
#include "model/runtime.h"
#include "../common/sanitizers.h"

namespace {

// Page faults of one round of a step's pattern -- a big tensor, a smaller one allocated while it lives, both freed
// -- after two rounds of it.
long faults_of_a_repeated_round() {
  auto round = [] {
    const auto big = torch::zeros({50265, 256});  // the word-embedding gradient's shape (51 MB)
    const auto later = torch::ones({8, 4, 325, 325});
  };
  round();
  round();
  const long before = bt::minor_page_faults();
  round();
  return bt::minor_page_faults() - before;
}

}  // namespace

TEST(Runtime, FreedTensorMemoryGoesToTheNextTensorOfItsSize) {
#if BT_TEST_REPLACED_MALLOC
  GTEST_SKIP() << "not glibc's malloc (a sanitizer's allocator replaces it)";
#else
  // (In a process of its own, as ctest runs it, c10's allocator takes > 12,000 faults per round here -- fresh pages
  // for every 51 MB tensor; in a process whose heap earlier tests shaped it may happen to take none.)
  bt::model::init_runtime();  // as every binary's main() (a no-op here: test_main.cpp ran it)
  EXPECT_LT(faults_of_a_repeated_round(), 300) << "freed tensor memory was not reused";
  for (int64_t n : {1, 7, 1000, 123457}) {
    const auto t = torch::empty({n});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u) << n << " floats";
  }
  EXPECT_EQ(torch::empty({0}).data_ptr(), nullptr);
#endif
}

// The model's kernels (dropout, bf16 rounding, QuickGELU, attention weights) split their rows over torch's threads:
// built without OpenMP they ran on one core whatever the thread count.
TEST(Runtime, ModelKernelsRunOnTorchsThreads) {
  const int threads = at::get_num_threads();
  at::set_num_threads(2);
  EXPECT_EQ(bt::model::model_kernel_threads(), 2);
  at::set_num_threads(1);
  EXPECT_EQ(bt::model::model_kernel_threads(), 1);
  at::set_num_threads(threads);
}
