// Stand-in when bt_model is not built: the BridgeTower test then skips (see test_dist.cpp).
#include "common/error.h"
#include "toy.h"

namespace bt::dist::testing {
int run_bt_worker(Group&, const std::string&, const std::string&, bool) { bt::fail("built without bt_model"); }
ToyResult bt_reference(const std::string&, int, bool) { bt::fail("built without bt_model"); }
}  // namespace bt::dist::testing
