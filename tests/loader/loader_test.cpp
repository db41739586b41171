// Loader behaviour with the fake dataset/transform. Threaded: labelled `threads` so TSan runs it.
#include "loader/loader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "fake.h"

namespace bt::loader {
namespace {

using test::FakeDataset;

LoaderOptions opts(int workers, int batch = 4) {
  LoaderOptions o;
  o.num_workers = workers;
  o.prefetch_batches = 3;
  o.batch_size = batch;
  o.transform.image_size = 6;
  o.sampler.seed = 11;
  o.sampler.dedupe_images_in_batch = false;  // the orders are compared with a bare Sampler's
  o.decoded_cache_mb = 0;
  o.transform_factory = test::fake_factory();
  return o;
}

// Everything a batch carries, as bytes, for exact comparison.
struct Snapshot {
  std::vector<size_t> rows;
  std::vector<std::string> captions;
  std::vector<float> pixels;
  std::vector<uint8_t> u8;
  std::vector<size_t> index;
  bool operator==(const Snapshot&) const = default;
};

Snapshot run_epoch(std::shared_ptr<const data::Dataset> ds, LoaderOptions o, uint64_t epoch = 0,
                   size_t start = 0) {
  Loader l(std::move(ds), o);
  l.start_epoch(epoch, start);
  Snapshot s;
  while (auto b = l.next()) {
    EXPECT_EQ(b->epoch, epoch);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->pixels.data()) % 64, 0u);
    s.index.push_back(b->index);
    s.rows.insert(s.rows.end(), b->rows.begin(), b->rows.end());
    s.captions.insert(s.captions.end(), b->captions.begin(), b->captions.end());
    s.pixels.insert(s.pixels.end(), b->pixels.begin(), b->pixels.end());
    s.u8.insert(s.u8.end(), b->pixels_u8.begin(), b->pixels_u8.end());
  }
  return s;
}

TEST(Loader, BatchesAreIdenticalForAnyWorkerCount) {
  for (auto mode : {media::TransformMode::kEval, media::TransformMode::kTrain}) {
    auto ds = std::make_shared<FakeDataset>(61, 20, std::set<size_t>{}, std::set<size_t>{}, 300);
    auto o = opts(0);
    o.transform.mode = mode;
    o.output_u8 = true;
    Snapshot ref = run_epoch(ds, o, 1);
    ASSERT_EQ(ref.rows.size(), 61u);
    EXPECT_EQ(ref.index.size(), 16u);
    EXPECT_EQ(ref.rows, Sampler(61, o.sampler).epoch_rows(1));
    for (int w : {1, 2, 4}) {
      o.num_workers = w;
      EXPECT_TRUE(run_epoch(ds, o, 1) == ref) << w << " workers";
    }
  }
}

TEST(Loader, TrainAugmentationDependsOnEpoch) {
  auto ds = std::make_shared<FakeDataset>(8, 8);
  auto o = opts(2);
  o.sampler.shuffle = false;
  o.transform.mode = media::TransformMode::kTrain;
  EXPECT_NE(run_epoch(ds, o, 0).pixels, run_epoch(ds, o, 1).pixels);
}

TEST(Loader, ResumeFromStepMatchesUninterruptedRun) {
  auto ds = std::make_shared<FakeDataset>(40, 40);
  for (int w : {0, 2}) {
    auto o = opts(w);
    Snapshot full = run_epoch(ds, o, 3);
    Snapshot resumed = run_epoch(ds, o, 3, 3 * 4);
    ASSERT_EQ(resumed.rows.size(), 40u - 12u);
    EXPECT_TRUE(std::equal(resumed.rows.begin(), resumed.rows.end(), full.rows.begin() + 12));
    EXPECT_TRUE(std::equal(resumed.pixels.begin(), resumed.pixels.end(), full.pixels.begin() + 12 * 108));
    EXPECT_EQ(resumed.index.front(), 3u);
  }
}

TEST(Loader, ShardedLoadersSplitTheEpoch) {
  auto ds = std::make_shared<FakeDataset>(30, 30);
  std::multiset<size_t> all;
  for (int r = 0; r < 4; ++r) {
    auto o = opts(2);
    o.sampler.rank = r;
    o.sampler.world_size = 4;
    auto s = run_epoch(ds, o);
    EXPECT_EQ(s.rows.size(), 8u);
    all.insert(s.rows.begin(), s.rows.end());
  }
  EXPECT_EQ(std::set<size_t>(all.begin(), all.end()).size(), 30u);
}

TEST(Loader, BadSampleStopsWithOneLineNamingTheFile) {
  for (int w : {0, 1, 2, 4}) {
    auto ds = std::make_shared<FakeDataset>(40, 40, std::set<size_t>{17}, std::set<size_t>{}, 200);
    auto o = opts(w);
    o.sampler.shuffle = false;
    Loader l(ds, o);
    l.start_epoch(0);
    size_t delivered = 0;
    std::string msg;
    try {
      while (auto b = l.next()) ++delivered;
    } catch (const Error& e) {
      msg = e.what();
    }
    EXPECT_EQ(delivered, 4u) << "batches before the bad one are delivered, w=" << w;
    EXPECT_NE(msg.find("fake.jsonl:18 (img17.jpg)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not a JPEG or PNG"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos);
    EXPECT_THROW(l.next(), Error) << "stays failed";
  }
}

TEST(Loader, UnreadableFileErrorComesFromTheDataset) {
  auto ds = std::make_shared<FakeDataset>(12, 12, std::set<size_t>{}, std::set<size_t>{5});
  Loader l(ds, opts(2));
  l.start_epoch(0);
  try {
    while (l.next()) {
    }
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("img5.jpg': No such file"), std::string::npos) << e.what();
  }
}

TEST(Loader, SkipPolicyKeepsBatchesFullAndCounts) {
  std::set<size_t> bad = {0, 7, 8, 30}, missing = {21};
  auto ds = std::make_shared<FakeDataset>(41, 41, bad, missing, 100);
  auto o = opts(0);
  o.on_bad_sample = data::OnBad::kSkip;
  Snapshot ref;
  for (int w : {0, 1, 2, 4}) {
    o.num_workers = w;
    Loader l(ds, o);
    l.start_epoch(0);
    Snapshot s;
    size_t skipped = 0;
    while (auto b = l.next()) {
      EXPECT_EQ(static_cast<size_t>(b->size), b->index == 10 ? 1u : 4u);
      skipped += b->skipped;
      s.rows.insert(s.rows.end(), b->rows.begin(), b->rows.end());
      s.pixels.insert(s.pixels.end(), b->pixels.begin(), b->pixels.end());
    }
    EXPECT_EQ(s.rows.size(), 41u);
    for (size_t r : s.rows) EXPECT_TRUE(!bad.count(r) && !missing.count(r)) << r;
    EXPECT_EQ(skipped, 5u);
    LoaderStats st = l.stats();
    EXPECT_EQ(st.skipped, 5u);
    EXPECT_EQ(st.first_skipped.size(), 5u);
    EXPECT_EQ(st.samples, 41u);
    if (w == 0) ref = s;
    else EXPECT_TRUE(s == ref) << "replacements do not depend on timing, w=" << w;
  }
}

// p + k*B wraps onto p itself when the order holds one batch: the replacement must still find the good rows.
TEST(Loader, SkipPolicyFindsReplacementsInAnOrderOfOneBatch) {
  auto ds = std::make_shared<FakeDataset>(4, 4, std::set<size_t>{1});
  auto o = opts(1);
  o.on_bad_sample = data::OnBad::kSkip;
  o.batch_size = 4;
  Loader l(ds, o);
  l.start_epoch(0);
  auto b = l.next();  // before: "the next 8 replacement candidates were bad too" (all of them row 1)
  ASSERT_TRUE(b);
  EXPECT_EQ(b->skipped, 1u);
  for (size_t r : b->rows) EXPECT_NE(r, 1u);
}

TEST(Loader, SkipPolicyGivesUpWhenEverythingIsBad) {
  std::set<size_t> all;
  for (size_t i = 0; i < 8; ++i) all.insert(i);
  auto ds = std::make_shared<FakeDataset>(8, 8, all);
  auto o = opts(2);
  o.on_bad_sample = data::OnBad::kSkip;
  Loader l(ds, o);
  l.start_epoch(0);
  EXPECT_THROW(l.next(), Error);
}

TEST(Loader, DestroyMidEpochAndRestartDoNotHang) {
  auto ds = std::make_shared<FakeDataset>(400, 400, std::set<size_t>{}, std::set<size_t>{}, 500);
  for (int w : {1, 2, 4}) {
    {
      Loader l(ds, opts(w));
      l.start_epoch(0);
      auto b = l.next();
      ASSERT_TRUE(b);
    }  // batch returned, then the loader stops its workers mid-epoch
    Loader l(ds, opts(w));
    l.start_epoch(0);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(l.next());
    l.start_epoch(1, 8);  // early stop of epoch 0, then a fresh epoch
    auto b = l.next();
    ASSERT_TRUE(b);
    EXPECT_EQ(b->epoch, 1u);
    EXPECT_EQ(b->index, 2u);
  }
  Loader never_started(ds, opts(2));  // destroyed without an epoch
}

TEST(Loader, BackPressureBoundsWorkAhead) {
  auto ds = std::make_shared<FakeDataset>(400, 400);
  auto o = opts(2);
  Loader l(ds, o);
  l.start_epoch(0);
  auto b = l.next();
  ASSERT_TRUE(b);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // give the workers every chance to run ahead
  // The consumer holds batch 0; workers may fill at most prefetch_batches more.
  EXPECT_LE(ds->reads.load(), static_cast<size_t>((o.prefetch_batches + 1) * o.batch_size));
}

TEST(Loader, BuffersComeFromAPool) {
  auto ds = std::make_shared<FakeDataset>(200, 200);
  auto o = opts(2);
  Loader l(ds, o);
  l.start_epoch(0);
  std::set<const float*> buffers;
  while (auto b = l.next()) buffers.insert(b->pixels.data());
  EXPECT_LE(buffers.size(), static_cast<size_t>(o.prefetch_batches + 2));
}

TEST(Loader, U8OnlyOutputSkipsNormalisation) {
  auto ds = std::make_shared<FakeDataset>(10, 10);
  auto o = opts(2);
  o.output_u8 = true;
  Snapshot both = run_epoch(ds, o);
  o.output_float = false;
  Snapshot u8 = run_epoch(ds, o);
  EXPECT_TRUE(u8.pixels.empty());
  EXPECT_EQ(u8.u8, both.u8);
  ASSERT_EQ(both.u8.size(), 10u * 108);
  EXPECT_FLOAT_EQ(both.pixels[0], both.u8[0] / 255.0f - 0.5f);  // channel 0 of pixel 0
}

TEST(Loader, CacheHitsReturnIdenticalCrops) {
  auto ds = std::make_shared<FakeDataset>(60, 7);
  auto o = opts(0);
  o.output_u8 = true;
  Snapshot nocache = run_epoch(ds, o);
  o.decoded_cache_mb = 1;
  {
    Loader l(ds, o);
    ASSERT_NE(l.cache(), nullptr);
    l.start_epoch(0);
    Snapshot s;
    while (auto b = l.next()) {
      s.rows.insert(s.rows.end(), b->rows.begin(), b->rows.end());
      s.pixels.insert(s.pixels.end(), b->pixels.begin(), b->pixels.end());
      s.u8.insert(s.u8.end(), b->pixels_u8.begin(), b->pixels_u8.end());
    }
    EXPECT_EQ(s.pixels, nocache.pixels);
    EXPECT_EQ(s.u8, nocache.u8);
    EXPECT_EQ(l.stats().cache_hits, 60u - 7u);
    EXPECT_NEAR(l.stats().cache_hit_rate(), 53.0 / 60.0, 1e-9);
  }
  o.num_workers = 2;
  EXPECT_EQ(run_epoch(ds, o).pixels, nocache.pixels);
  o.transform.mode = media::TransformMode::kTrain;
  EXPECT_EQ(Loader(ds, o).cache(), nullptr) << "random transforms are never cached";
}

// A crop is stored only if it can be read again: on the first pass only images that come back later in it;
// from the second pass on every image (the third pass then reads them all from the cache).
TEST(Loader, CacheStoresOnlyCropsThatCanBeReadAgain) {
  auto distinct = std::make_shared<FakeDataset>(24, 24);
  auto o = opts(2);
  o.output_u8 = true;
  o.decoded_cache_mb = 1;
  const Snapshot nocache = [&] {
    auto p = o;
    p.decoded_cache_mb = 0;
    return run_epoch(distinct, p);
  }();
  Loader l(distinct, o);
  for (int pass = 0; pass < 3; ++pass) {
    l.start_epoch(0);
    std::vector<float> pixels;
    while (auto b = l.next()) pixels.insert(pixels.end(), b->pixels.begin(), b->pixels.end());
    EXPECT_EQ(pixels, nocache.pixels) << "pass " << pass;
    EXPECT_EQ(l.cache()->entries(), pass == 0 ? 0u : 24u) << "pass " << pass;
    EXPECT_EQ(l.stats().cache_hits, pass < 2 ? 0u : 24u) << "pass " << pass;
  }
  // Images repeated within the first pass are stored, except at their last use. One worker: with two, two uses
  // of one image can be decoded at the same time (both miss), so the count would depend on timing.
  auto repeated = std::make_shared<FakeDataset>(24, 6);
  auto one = opts(1);
  one.output_u8 = true;
  one.decoded_cache_mb = 1;
  Loader r(repeated, one);
  r.start_epoch(0);
  while (r.next()) {
  }
  EXPECT_EQ(r.stats().cache_hits, 24u - 6u);
  EXPECT_EQ(r.cache()->entries(), 6u);
}

TEST(Loader, DedupeOptionReachesTheSampler) {
  auto ds = std::make_shared<FakeDataset>(64, 16);
  auto o = opts(2, 8);
  o.sampler.dedupe_images_in_batch = true;
  Loader l(ds, o);
  l.start_epoch(0);
  while (auto b = l.next()) {
    std::set<std::string> keys(b->image_keys.begin(), b->image_keys.end());
    EXPECT_EQ(keys.size(), b->image_keys.size());
  }
}

TEST(Loader, RejectsBadOptions) {
  auto ds = std::make_shared<FakeDataset>(4, 4);
  auto o = opts(-1);
  EXPECT_THROW(Loader(ds, o), Error);
  o = opts(1);
  o.prefetch_batches = 0;
  EXPECT_THROW(Loader(ds, o), Error);
  Loader l(ds, opts(1));
  EXPECT_THROW(l.start_epoch(0, 5), Error);
}

}  // namespace
}  // namespace bt::loader
