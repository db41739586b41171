// StreamWindowDataset under the unchanged Loader (issue 45, bounded-memory streamed training): the batches are
// StreamOrder's sequence in order, the same for 0/1/3 workers, never more than the window held, exact resume from a
// saved cursor (or by re-reading), and a stream that fails names its URL. Threaded: labelled `threads`.
#include "data/stream_window.h"

#include <gtest/gtest.h>

#include "../data/loopback_http.h"
#include "../data/test_util.h"
#include "common/error.h"
#include "data/synth.h"
#include "fake.h"
#include "loader/loader.h"

namespace bt::loader {
namespace {

using data::StreamWindowDataset;

constexpr int kBatch = 4, kPrefetch = 2;
constexpr size_t kWindow = (kPrefetch + 2) * kBatch;

class StreamWindow : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new data::testing::TempDir();
    data::SynthOptions so;
    so.n = 90;  // 30 shards of 3: many more shards than the window holds samples
    so.tar = true;
    so.shard_size = 3;
    so.min_width = 16, so.max_width = 24;
    so.threads = 1;
    data::write_synth(dir_->path(), so);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::vector<std::string> shards() { return data::expand_shard_pattern(*dir_ / "shard-{000000..000029}.tar"); }

  static std::shared_ptr<StreamWindowDataset> window(size_t length, size_t start = 0,
                                                     std::optional<data::StreamCursor> c = std::nullopt,
                                                     std::vector<std::string> locations = shards()) {
    data::ShardOptions so;
    so.stream.retry_pause_ms = 1;
    return std::make_shared<StreamWindowDataset>(std::move(locations), so, data::StreamOrderOptions{5, 0, 1, 3}, c,
                                                 data::StreamWindowOptions{length, start, kWindow, kBatch});
  }
  // The captions and pixels of every batch from `start`, releasing each delivered batch as the trainer does.
  static std::vector<std::string> run(StreamWindowDataset& w, std::shared_ptr<const data::Dataset> ds, int workers,
                                      size_t start = 0, std::vector<float>* pixels = nullptr) {
    LoaderOptions o;
    o.num_workers = workers;
    o.prefetch_batches = kPrefetch;
    o.batch_size = kBatch;
    o.transform.image_size = 4;
    o.sampler.shuffle = false;
    o.sampler.dedupe_images_in_batch = false;
    o.decoded_cache_mb = 0;
    o.transform_factory = test::fake_factory();
    Loader l(std::move(ds), o);
    l.start_epoch(0, start);
    std::vector<std::string> caps;
    while (auto b = l.next()) {
      caps.insert(caps.end(), b->captions.begin(), b->captions.end());
      if (pixels) pixels->insert(pixels->end(), b->pixels.begin(), b->pixels.end());
      w.release_before(b->first_sample + static_cast<size_t>(b->size));
    }
    return caps;
  }
  static inline data::testing::TempDir* dir_ = nullptr;
};

TEST_F(StreamWindow, BatchesAreTheOrderForAnyWorkerCountWithinTheWindow) {
  constexpr size_t kLength = 120;  // past one epoch (90 samples)
  data::StreamOrder order(shards(), {}, {5, 0, 1, 3});
  std::vector<std::string> want;
  data::TarSample t;
  for (size_t i = 0; i < kLength; ++i) order.next(t), want.push_back(t.caption);
  std::vector<float> first;
  for (int workers : {0, 1, 3}) {
    auto w = window(kLength);
    std::vector<float> px;
    EXPECT_EQ(run(*w, w, workers, 0, &px), want) << workers << " workers";
    if (first.empty()) first = px;
    EXPECT_EQ(px, first) << workers << " workers";
    EXPECT_LE(w->held_max(), kWindow) << workers << " workers";
    EXPECT_GE(w->held_max(), size_t(kBatch));
    EXPECT_EQ(w->epoch(), 1u);
  }
}

TEST_F(StreamWindow, ResumesExactlyFromACursorOrByRereading) {
  constexpr size_t kLength = 100, kCut = 13 * kBatch;
  auto full = window(kLength);
  const auto want = run(*full, full, 2);
  auto first = window(kLength);
  {
    LoaderOptions o;  // read up to the cut, as a run stopped at a checkpoint
    o.num_workers = 1, o.prefetch_batches = kPrefetch, o.batch_size = kBatch, o.transform.image_size = 4;
    o.sampler.shuffle = false, o.sampler.dedupe_images_in_batch = false, o.decoded_cache_mb = 0;
    o.transform_factory = test::fake_factory();
    Loader l(first, o);
    for (size_t k = 0; k < kCut / kBatch; ++k) {
      auto b = l.next();
      first->release_before(b->first_sample + static_cast<size_t>(b->size));
    }
  }
  const auto cursor = data::StreamCursor::from_json(first->cursor_at(kCut));
  EXPECT_THROW(first->cursor_at(kCut + 1), bt::Error);  // not a batch boundary
  EXPECT_EQ(cursor.samples, kCut);
  EXPECT_EQ(first->epoch_before(kCut), 0u);  // 52 of 90: still the first epoch, whatever was read ahead
  const std::vector<std::string> rest(want.begin() + long(kCut), want.end());
  auto resumed = window(kLength, kCut, cursor);
  EXPECT_EQ(run(*resumed, resumed, 3, kCut), rest);
  auto reread = window(kLength, kCut);
  EXPECT_EQ(run(*reread, reread, 0, kCut), rest);
  EXPECT_LE(reread->held_max(), kWindow);
}

TEST_F(StreamWindow, ReadsOutsideTheWindowAndFailedStreamsAreOneLineErrors) {
  auto w = window(40);
  std::vector<uint8_t> bytes;
  EXPECT_THROW(w->read_image(kWindow, bytes), bt::Error);  // beyond the window: never waits
  w->read_image(0, bytes);
  EXPECT_FALSE(bytes.empty());
  EXPECT_FALSE(w->caption(0).empty());
  w->release_before(8);
  EXPECT_THROW(w->read_image(3, bytes), bt::Error);  // released
  EXPECT_TRUE(w->caption(3).empty());
  EXPECT_NE(w->identity().find("streamed: 30 shards"), std::string::npos);

  if (!data::have_http_streams()) GTEST_SKIP() << "this build has no libcurl";
  data::testing::LoopbackHttp http(dir_->path() + "/");
  http.drop_after = 3000;  // dropped connections are resumed: the same samples
  http.drops_left = 4;
  auto remote = window(30, 0, std::nullopt, data::expand_shard_pattern(http.url("shard-{000000..000029}.tar")));
  auto local = window(30);
  EXPECT_EQ(run(*remote, remote, 3), run(*local, local, 3));
  const std::string missing = http.url("shard-000099.tar");
  auto gone = window(8, 0, std::nullopt, {missing, missing});
  try {
    gone->read_image(0, bytes);
    ADD_FAILURE() << "a 404 must fail";
  } catch (const bt::Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing + ": HTTP 404"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bt::loader
