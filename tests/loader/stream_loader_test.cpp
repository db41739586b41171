// The streaming loader over generated tar shards (bt::data's synth writer) with the real media pipeline.
#include "loader/stream_loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "common/error.h"
#include "data/synth.h"

namespace bt::loader {
namespace {

namespace fs = std::filesystem;

class StreamLoaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("bt_stream_test_" + std::to_string(::getpid())));
    data::SynthOptions o;
    o.n = 44;
    o.images = 11;
    o.min_width = 96;
    o.max_width = 128;
    o.tar = true;
    o.shard_size = 8;  // 6 shards, the last one short
    o.threads = 1;
    data::write_synth(dir_->string(), o);
    for (auto& e : fs::directory_iterator(*dir_)) shards_.push_back(e.path().string());
    std::sort(shards_.begin(), shards_.end());
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static LoaderOptions opts(int workers) {
    LoaderOptions o;
    o.num_workers = workers;
    o.batch_size = 4;
    o.prefetch_batches = 2;
    o.transform.image_size = 24;
    o.transform.mode = media::TransformMode::kTrain;
    o.sampler.seed = 5;
    return o;
  }
  struct Epoch {
    std::vector<std::string> keys, captions;
    std::vector<float> pixels;
    std::vector<size_t> rows, index;
  };
  static Epoch run(StreamLoader& l, uint64_t epoch, size_t start = 0) {
    l.start_epoch(epoch, start);
    Epoch e;
    while (auto b = l.next()) {
      EXPECT_EQ(b->epoch, epoch);
      e.index.push_back(b->index);
      e.keys.insert(e.keys.end(), b->image_keys.begin(), b->image_keys.end());
      e.captions.insert(e.captions.end(), b->captions.begin(), b->captions.end());
      e.rows.insert(e.rows.end(), b->rows.begin(), b->rows.end());
      e.pixels.insert(e.pixels.end(), b->pixels.begin(), b->pixels.end());
    }
    return e;
  }
  static inline fs::path* dir_ = nullptr;
  static inline std::vector<std::string> shards_;
};

TEST_F(StreamLoaderTest, EverySampleOnceAndIdenticalForAnyWorkerCount) {
  ASSERT_EQ(shards_.size(), 6u);
  StreamOptions so;
  so.shuffle_buffer = 10;
  Epoch ref;
  for (int w : {0, 1, 2, 4}) {
    StreamLoader l(shards_, {}, opts(w), so, /*chunk_batches=*/2);
    Epoch e = run(l, 1);
    EXPECT_EQ(e.keys.size(), 44u);
    EXPECT_EQ(std::set<std::string>(e.keys.begin(), e.keys.end()).size(), 44u) << "each sample once";
    for (size_t i = 0; i < e.rows.size(); ++i) EXPECT_EQ(e.rows[i], i);
    EXPECT_EQ(e.index.back(), 10u);
    if (w == 0) ref = e;
    else {
      EXPECT_EQ(e.keys, ref.keys) << w;
      EXPECT_EQ(e.pixels, ref.pixels) << w;
    }
  }
  StreamLoader l(shards_, {}, opts(2), so, 2);
  EXPECT_NE(run(l, 2).keys, ref.keys) << "another epoch, another order";
}

TEST_F(StreamLoaderTest, ResumeMatchesUninterruptedRun) {
  StreamLoader l(shards_, {}, opts(2), {}, 3);
  Epoch full = run(l, 0);
  Epoch resumed = run(l, 0, 8);
  ASSERT_EQ(resumed.keys.size(), 36u);
  EXPECT_TRUE(std::equal(resumed.keys.begin(), resumed.keys.end(), full.keys.begin() + 8));
  EXPECT_TRUE(std::equal(resumed.pixels.begin(), resumed.pixels.end(), full.pixels.begin() + 8 * 24 * 24 * 3));
  EXPECT_EQ(resumed.index.front(), 2u);
}

TEST_F(StreamLoaderTest, RanksReadDisjointShardsCoveringAll) {
  std::set<std::string> all;
  for (int r = 0; r < 3; ++r) {
    auto o = opts(1);
    o.sampler.rank = r;
    o.sampler.world_size = 3;
    StreamLoader l(shards_, {}, o);
    for (auto& k : run(l, 0).keys) EXPECT_TRUE(all.insert(k).second) << "key on two ranks: " << k;
  }
  EXPECT_EQ(all.size(), 44u);
}

TEST_F(StreamLoaderTest, TruncatedShardStopsWithItsName) {
  fs::path bad = *dir_ / "cut";
  fs::create_directories(bad);
  std::vector<std::string> shards;
  for (size_t i = 0; i < 3; ++i) {
    fs::path p = bad / fs::path(shards_[i]).filename();
    fs::copy_file(shards_[i], p, fs::copy_options::overwrite_existing);
    shards.push_back(p.string());
  }
  fs::resize_file(shards[1], fs::file_size(shards[1]) / 2);
  StreamLoader l(shards, {}, opts(2));
  l.start_epoch(0);
  try {
    while (l.next()) {
    }
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fs::path(shards[1]).filename().string()), std::string::npos) << e.what();
  }
  data::ShardOptions skip;
  skip.on_bad = data::OnBad::kSkip;
  auto o = opts(2);
  o.on_bad_sample = OnBadSample::kSkip;
  StreamLoader s(shards, skip, o);
  Epoch e = run(s, 0);
  EXPECT_GE(e.keys.size(), 16u);
  EXPECT_LT(e.keys.size(), 24u);
  EXPECT_GT(s.stats().skipped, 0u);
}

TEST_F(StreamLoaderTest, DestroyMidEpoch) {
  for (int w : {0, 2}) {
    StreamLoader l(shards_, {}, opts(w), {}, 1);
    l.start_epoch(0);
    ASSERT_TRUE(l.next());
    ASSERT_TRUE(l.next());
  }
}

}  // namespace
}  // namespace bt::loader
