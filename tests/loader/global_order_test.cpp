// GlobalOrderView: position p reads row order[p] of the single-process epoch order (shuffle + dedupe in batches
// of the global batch), so ranks sharding the view read exactly the rows of one process at batch W*B.
#include "loader/global_order.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "common/error.h"
#include "fake.h"
#include "loader/loader.h"

namespace bt::loader {
namespace {

TEST(GlobalOrderView, PositionsFollowTheSingleProcessOrderOfEachEpoch) {
  auto base = std::make_shared<test::FakeDataset>(40, 10);
  SamplerOptions so;
  so.seed = 5;
  so.rank = 1, so.world_size = 2;  // ignored: the view's order is the single-process one
  so.dedupe_images_in_batch = true;
  so.batch_size = 8;  // the global batch
  GlobalOrderView view(base, so);
  SamplerOptions one = so;
  one.rank = 0, one.world_size = 1;
  const Sampler ref(base->size(), one, image_ids_of(*base));
  for (uint64_t epoch : {0, 1}) {
    view.set_epoch(epoch);
    const std::vector<size_t> order = ref.epoch_rows(epoch);
    ASSERT_EQ(view.size(), order.size());
    for (size_t p = 0; p < order.size(); ++p) {
      EXPECT_EQ(view.caption(p), base->caption(order[p])) << "epoch " << epoch << " position " << p;
      EXPECT_EQ(view.image_key(p), base->image_key(order[p]));
    }
    // A global batch of 8 holds no repeated image (10 distinct images: dedupe can always avoid it).
    std::set<std::string> keys;
    for (size_t p = 0; p < 8; ++p) keys.insert(view.image_key(p));
    EXPECT_EQ(keys.size(), 8u);
  }
  EXPECT_NE(ref.epoch_rows(0), ref.epoch_rows(1));
  EXPECT_THROW(view.caption(40), Error);
}

}  // namespace
}  // namespace bt::loader
