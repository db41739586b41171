// GlobalOrderView and data::Subset, the row-mapped views. GlobalOrderView: position p reads row order[p] of the single-process epoch order (shuffle + dedupe in batches
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

// The row-mapped view's other form, PyTorch's Subset: any rows, repeats allowed, every call (errors included)
// answered by the base's row.
TEST(Subset, PositionsReadTheGivenRowsOfTheBase) {
  auto base = std::make_shared<test::FakeDataset>(10, 5, std::set<size_t>{}, std::set<size_t>{7});
  const data::Subset sub(base, {7, 2, 2});
  ASSERT_EQ(sub.size(), 3u);
  EXPECT_EQ(sub.caption(1), base->caption(2));
  EXPECT_EQ(sub.image_key(2), base->image_key(2));
  EXPECT_EQ(sub.describe(0), base->describe(7));
  std::vector<uint8_t> a, b;
  sub.read_image(1, a);
  base->read_image(2, b);
  EXPECT_EQ(a, b);
  EXPECT_THROW(sub.read_image(0, a), Error);  // row 7's image is missing in the base
  EXPECT_EQ(data::first_rows(3), (std::vector<size_t>{0, 1, 2}));
}

}  // namespace
}  // namespace bt::loader
