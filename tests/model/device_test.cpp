// model/device.h: --device parsing and the one intra-op thread rule of train, evaluate and final evaluations.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "common/error.h"
#include "model/device.h"

namespace bt::model {
namespace {

TEST(Device, ParsesCpuAndRefusesOthersNamingTheFlag) {
  EXPECT_TRUE(parse_device("cpu").is_cpu());
  try {
    parse_device("tpu");
    FAIL() << "tpu accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--device must be cpu or cuda"), std::string::npos) << e.what();
  }
}

TEST(Device, TorchThreadsAreWhatTheLoaderWorkersLeaveFree) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_EQ(torch_threads_for(3, 8, true, 0), 3);  // asked for: kept
  EXPECT_EQ(torch_threads_for(0, 1, true, 0), std::max(1, cores - 1));
  EXPECT_EQ(torch_threads_for(0, cores + 4, true, 0), 1);  // never 0 on the CPU
  EXPECT_EQ(torch_threads_for(0, 2, false, 0), 0);         // torch's default on a GPU
  // A compute-bound model: every core, whatever the loader's workers; below the bound the workers come first.
  EXPECT_EQ(torch_threads_for(0, 2, true, kComputeBoundParameters), cores);
  EXPECT_EQ(torch_threads_for(0, 2, true, kComputeBoundParameters - 1), std::max(1, cores - 2));
  EXPECT_EQ(torch_threads_for(1, 2, true, kComputeBoundParameters), 1);  // asked for: kept
  EXPECT_EQ(torch_threads_for(0, 2, false, kComputeBoundParameters), 0);
  // Data-parallel ranks on one host share its cores (LOCAL_WORLD_SIZE); never 0.
  EXPECT_EQ(torch_threads_for(0, 2, true, kComputeBoundParameters, 2), std::max(1, cores / 2));
  EXPECT_EQ(torch_threads_for(0, 1, true, 0, 2), std::max(1, cores / 2 - 1));
  EXPECT_EQ(torch_threads_for(0, 0, true, kComputeBoundParameters, 2 * cores), 1);
}

}  // namespace
}  // namespace bt::model
