// The main() of the torch test executables: the process set up as bridgetune's (model/runtime.h: the switches read
// once, the allocator policy, OpenBLAS on one thread), so the kernels are tested under the runtime they run in.
#include <gtest/gtest.h>

#include "model/runtime.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  bt::model::init_runtime();
  return RUN_ALL_TESTS();
}
