// Mixing datasets (loader/mix_order.h, data/concat_dataset.h): HF interleave_datasets' orders, the sampler and the
// loader over a mix. Threaded (the Loader): labelled `threads`.
#include "loader/mix_order.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>

#include "common/error.h"
#include "data/concat_dataset.h"
#include "fake.h"
#include "loader/global_order.h"
#include "loader/loader.h"

namespace bt::loader {
namespace {

std::shared_ptr<const MixPlan> plan(std::vector<size_t> sizes, std::vector<double> w, MixStopping s,
                                    uint64_t seed = 3) {
  return std::make_shared<const MixPlan>(make_mix_plan({}, std::move(sizes), std::move(w), s, seed));
}

// HF's own examples for lengths [3, 4, 5] (datasets/arrow_dataset.py, _interleave_map_style_datasets), file order.
TEST(MixOrder, RoundRobinIsHfsInterleaveWithoutProbabilities) {
  auto first = plan({3, 4, 5}, {}, MixStopping::kFirstExhausted);
  EXPECT_EQ(mix_epoch_order(*first, false, 1, 0), (std::vector<size_t>{0, 3, 7, 1, 4, 8, 2, 5, 9}));
  auto all = plan({3, 4, 5}, {}, MixStopping::kAllExhausted);
  EXPECT_EQ(mix_epoch_order(*all, false, 1, 0),
            (std::vector<size_t>{0, 3, 7, 1, 4, 8, 2, 5, 9, 0, 6, 10, 1, 3, 11}));
  // Shuffled: the same alternation, each dataset read in a permutation of its own that changes with the epoch.
  const auto e0 = mix_epoch_order(*first, true, 1, 0), e1 = mix_epoch_order(*first, true, 1, 1);
  for (size_t p = 0; p < e0.size(); ++p) {
    const size_t ds = p % 3, lo = first->offsets[ds];
    EXPECT_TRUE(e0[p] >= lo && e0[p] < lo + first->sizes[ds]) << p;
  }
  EXPECT_EQ(std::set<size_t>(e0.begin(), e0.begin() + 9).size(), 9u);  // no row twice within a pass
  EXPECT_NE(e0, e1);
  EXPECT_EQ(e0, mix_epoch_order(*first, true, 1, 0));
}

TEST(MixOrder, ProbabilitiesGiveTheirFrequenciesDeterministically) {
  // all_exhausted over big datasets: a long order whose draws follow 0.7 / 0.3 (normalised from 7 / 3).
  auto p = plan({30000, 30000}, {7, 3}, MixStopping::kAllExhausted, 11);
  ASSERT_EQ(p->weights, (std::vector<double>{0.7, 0.3}));
  size_t from_a = 0;
  for (uint16_t s : p->source) from_a += s == 0;
  const double freq = static_cast<double>(from_a) / static_cast<double>(p->length());
  EXPECT_NEAR(freq, 0.7, 0.01) << p->length();
  // all_exhausted ends right after the draw that completes the last dataset: B (the rarer) read exactly through.
  EXPECT_EQ(p->length() - from_a, 30000u);
  EXPECT_EQ(p->source.back(), 1);
  EXPECT_EQ(p->source, plan({30000, 30000}, {7, 3}, MixStopping::kAllExhausted, 11)->source);
  EXPECT_NE(p->source, plan({30000, 30000}, {7, 3}, MixStopping::kAllExhausted, 12)->source);
  // Oversampling: A's rows come round again (a second pass) while B is still being read through.
  const auto order = mix_epoch_order(*p, true, 11, 0);
  std::map<size_t, int> seen;
  for (size_t r : order) ++seen[r];
  EXPECT_EQ(seen.size(), 60000u);  // every row of both at least once
  EXPECT_EQ(order.size(), p->length());
}

TEST(MixOrder, FirstExhaustedStopsRightAfterTheFirstDatasetRunsOut) {
  auto p = plan({50, 1000}, {0.5, 0.5}, MixStopping::kFirstExhausted, 5);
  size_t from_a = 0;
  for (uint16_t s : p->source) from_a += s == 0;
  EXPECT_EQ(from_a, 50u);  // A exhausted ...
  EXPECT_EQ(p->source.back(), 0);  // ... by the last draw
  EXPECT_LT(p->length(), 1050u);
  // No row repeats: an undersampled epoch never restarts a dataset.
  const auto order = mix_epoch_order(*p, true, 5, 2);
  EXPECT_EQ(std::set<size_t>(order.begin(), order.end()).size(), order.size());
}

TEST(MixOrder, BadPlansFailWithOneLine) {
  EXPECT_THROW(plan({}, {}, MixStopping::kFirstExhausted), Error);
  EXPECT_THROW(plan({3, 0}, {}, MixStopping::kFirstExhausted), Error);
  EXPECT_THROW(plan({3, 4}, {1}, MixStopping::kFirstExhausted), Error);
  EXPECT_THROW(plan({3, 4}, {1, 0}, MixStopping::kFirstExhausted), Error);
  try {  // each weight finite, their sum not (issue 53): shares 0/0 trained on before
    plan({3, 4}, {1e308, 1e308}, MixStopping::kFirstExhausted);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--train_mix_weights: the weights add up past the largest number; give them as shares "
                           "(e.g. 0.5,0.5)");
  }
  try {  // a tiny weight with all_exhausted would make an epoch of ~10^9 rows: refused, naming the dataset
    make_mix_plan({"a.jsonl", "b.jsonl"}, {1000, 1000000}, {0.999, 0.001}, MixStopping::kAllExhausted, 1);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("b.jsonl (1000000 rows) at weight 0.001"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_mix_weights("0.7,0.3"), (std::vector<double>{0.7, 0.3}));
  EXPECT_THROW(parse_mix_weights("0.7,x"), Error);
  EXPECT_EQ(parse_mix_stopping("all_exhausted"), MixStopping::kAllExhausted);
  EXPECT_THROW(parse_mix_stopping("longest"), Error);
  EXPECT_EQ(make_mix_plan({"A", "B"}, {10, 20}, {0.7, 0.3}, MixStopping::kFirstExhausted, 1).summary().rfind(
                "mixing 2 datasets: A 0.7 (10 rows), B 0.3 (20 rows), first_exhausted: epoch = ", 0),
            0u);
}

// The concatenation: rows in part order, keys prefixed per part (equal keys of two files stay two images), errors
// naming the part.
TEST(ConcatDataset, ForwardsRowsAndKeepsPartsApart) {
  auto a = std::make_shared<test::FakeDataset>(3, 3), b = std::make_shared<test::FakeDataset>(2, 2, std::set<size_t>{},
                                                                                            std::set<size_t>{1});
  const data::ConcatDataset c({a, b}, {"a/fake.jsonl", "b/other.jsonl"});
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c.caption(4), b->caption(1));
  EXPECT_NE(c.image_key(0), c.image_key(3));  // both parts' row 0 is img0.jpg
  EXPECT_EQ(c.describe(0), a->describe(0));   // names fake.jsonl already
  EXPECT_EQ(c.describe(3), "b/other.jsonl: " + b->describe(0));
  std::vector<uint8_t> bytes;
  EXPECT_THROW(c.read_image(4, bytes), Error);
  EXPECT_THROW(c.caption(5), Error);
}

LoaderOptions mixed_options(int workers, std::shared_ptr<const MixPlan> mix) {
  LoaderOptions o;
  o.num_workers = workers;
  o.prefetch_batches = 3;
  o.batch_size = 4;
  o.transform.image_size = 4;
  o.transform.mode = media::TransformMode::kTrain;
  o.sampler.seed = 9;
  o.sampler.mix = std::move(mix);
  o.decoded_cache_mb = 0;
  o.transform_factory = test::fake_factory();
  return o;
}

std::vector<std::vector<float>> epoch_pixels(std::shared_ptr<const data::Dataset> ds, const LoaderOptions& o,
                                             uint64_t epoch, size_t start = 0, std::vector<size_t>* rows = nullptr) {
  Loader l(std::move(ds), o);
  l.start_epoch(epoch, start);
  std::vector<std::vector<float>> out;
  while (auto b = l.next()) {
    out.emplace_back(b->pixels.begin(), b->pixels.end());
    if (rows) rows->insert(rows->end(), b->rows.begin(), b->rows.end());
  }
  return out;
}

// The real Loader over a mix: the same batches for 0, 1 and 3 workers (dedupe on), the mixed epoch's length, a
// mid-epoch resume equal to the rest of the uninterrupted epoch, and ranks sharding it as DistributedSampler does.
TEST(MixedLoader, SameBatchesForAnyWorkerCountAndExactResume) {
  auto a = std::make_shared<test::FakeDataset>(13, 9, std::set<size_t>{}, std::set<size_t>{}, 200);
  auto b = std::make_shared<test::FakeDataset>(30, 11, std::set<size_t>{}, std::set<size_t>{}, 200);
  auto c = std::make_shared<data::ConcatDataset>(std::vector<std::shared_ptr<const data::Dataset>>{a, b},
                                                 std::vector<std::string>{"a.jsonl", "b.jsonl"});
  auto mix = std::make_shared<const MixPlan>(
      make_mix_plan({"a.jsonl", "b.jsonl"}, {13, 30}, {0.6, 0.4}, MixStopping::kAllExhausted, 9));
  std::vector<size_t> rows;
  const auto ref = epoch_pixels(c, mixed_options(0, mix), 1, 0, &rows);
  EXPECT_EQ(rows.size(), mix->length());
  EXPECT_EQ(ref.size(), (mix->length() + 3) / 4);
  for (int w : {1, 3}) EXPECT_EQ(epoch_pixels(c, mixed_options(w, mix), 1), ref) << w << " workers";
  const auto rest = epoch_pixels(c, mixed_options(3, mix), 1, 8);  // resumed at step 2 (batch 4)
  EXPECT_EQ(rest, std::vector<std::vector<float>>(ref.begin() + 2, ref.end()));
  EXPECT_NE(epoch_pixels(c, mixed_options(1, mix), 2), ref);
  // Two ranks: disjoint halves of the mixed order (padded to a multiple of 2), in the same order as one process's.
  LoaderOptions r0 = mixed_options(1, mix), r1 = mixed_options(1, mix);
  r0.sampler.dedupe_images_in_batch = r1.sampler.dedupe_images_in_batch = false;
  r0.sampler.world_size = r1.sampler.world_size = 2;
  r1.sampler.rank = 1;
  const Sampler one(c->size(), [&] { auto s = r0.sampler; s.world_size = 1; return s; }());
  const auto whole = one.epoch_rows(1), s0 = Sampler(c->size(), r0.sampler).epoch_rows(1),
             s1 = Sampler(c->size(), r1.sampler).epoch_rows(1);
  ASSERT_EQ(s0.size(), (mix->length() + 1) / 2);
  for (size_t k = 0; k < s1.size(); ++k) {
    EXPECT_EQ(s0[k], whole[2 * k]);
    EXPECT_EQ(s1[k], whole[(2 * k + 1) % whole.size()]);
  }
  // Several ranks with dedupe read a GlobalOrderView (train_setup.cpp): its positions are the mixed epoch's.
  SamplerOptions g = mixed_options(0, mix).sampler;
  g.batch_size = 8;
  GlobalOrderView view(c, g);
  view.set_epoch(1);
  const auto order = Sampler(c->size(), g, image_ids_of(*c)).epoch_rows(1);
  ASSERT_EQ(view.size(), mix->length());
  for (size_t p = 0; p < order.size(); ++p) EXPECT_EQ(view.image_key(p), c->image_key(order[p])) << p;
}

}  // namespace
}  // namespace bt::loader
