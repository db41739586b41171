// StreamOrder: the training order of streamed shards is a pure function of (seed, epoch, rank, data), ranks read
// disjoint shards, the stream runs on into the next epoch, and a saved cursor resumes the exact sequence.
#include <gtest/gtest.h>

#include <set>

#include "common/error.h"
#include "data/stream_order.h"
#include "data/stream_window.h"
#include "data/synth.h"
#include "loopback_http.h"
#include "test_util.h"

using namespace bt::data;
using bt::data::testing::TempDir;

namespace {

class Order : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    SynthOptions so;
    so.n = 60;  // 6 shards of 10, uneven reads come from K = 4 slots over 6 shards
    so.tar = true;
    so.shard_size = 10;
    so.min_width = 32, so.max_width = 48;
    so.threads = 1;
    write_synth(dir_->path(), so);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::vector<std::string> shards() { return expand_shard_pattern(*dir_ / "shard-{000000..000005}.tar"); }
  static std::vector<std::string> take(StreamOrder& o, size_t n) {
    std::vector<std::string> keys;
    TarSample t;
    for (size_t i = 0; i < n && o.next(t); ++i) keys.push_back(t.caption + "|" + t.key.substr(t.key.rfind(':')));
    return keys;
  }
  static inline TempDir* dir_ = nullptr;
};

TEST_F(Order, EpochCoversEveryShardOnceAndRunsOn) {
  StreamOrder o(shards(), {}, {});
  auto e0 = take(o, 60);
  EXPECT_EQ(std::set<std::string>(e0.begin(), e0.end()).size(), 60u);
  EXPECT_EQ(o.cursor().epoch, 0u);
  auto e1 = take(o, 60);  // the next epoch: the same samples, another order
  EXPECT_EQ(o.cursor().epoch, 1u);
  EXPECT_EQ(std::set<std::string>(e1.begin(), e1.end()), std::set<std::string>(e0.begin(), e0.end()));
  EXPECT_NE(e1, e0);
  // Interleaved: the first K samples come from K different shards.
  std::set<std::string> first_shards;
  TarSample t;
  StreamOrder again(shards(), {}, {});
  for (int i = 0; i < 4; ++i) again.next(t), first_shards.insert(t.key.substr(0, t.key.rfind(':')));
  EXPECT_EQ(first_shards.size(), 4u);
}

TEST_F(Order, SameSequenceEveryTimeAndRanksAreDisjoint) {
  StreamOrder a(shards(), {}, {}), b(shards(), {}, {});
  EXPECT_EQ(take(a, 130), take(b, 130));
  StreamOrderOptions r0{42, 0, 2, 2}, r1{42, 1, 2, 2};
  StreamOrder x(shards(), {}, r0), y(shards(), {}, r1);
  auto kx = take(x, 30), ky = take(y, 30);
  std::set<std::string> all(kx.begin(), kx.end());
  all.insert(ky.begin(), ky.end());
  EXPECT_EQ(all.size(), 60u);  // disjoint, covering
  EXPECT_EQ(x.cursor().epoch, 0u);
  StreamOrderOptions seeded{7, 0, 1, 4};
  StreamOrder z(shards(), {}, seeded);
  StreamOrder w(shards(), {}, {});
  EXPECT_NE(take(z, 60), take(w, 60));
}

TEST_F(Order, CursorResumesTheExactSequence) {
  StreamOrder full(shards(), {}, {});
  auto want = take(full, 150);  // across two epoch boundaries
  for (size_t cut : {1u, 37u, 60u, 61u, 99u}) {
    StreamOrder first(shards(), {}, {});
    take(first, cut);
    StreamCursor c = StreamCursor::from_json(first.cursor().to_json());
    EXPECT_EQ(c, first.cursor());
    StreamOrder resumed(shards(), {}, {}, c);
    auto rest = take(resumed, 150 - cut);
    EXPECT_EQ(rest, std::vector<std::string>(want.begin() + long(cut), want.end())) << "cut " << cut;
  }
  EXPECT_THROW(StreamCursor::from_json("{\"epoch\": 1}"), bt::Error);
  StreamOrderOptions k2{42, 0, 1, 2};
  StreamOrder first(shards(), {}, {});
  take(first, 5);
  EXPECT_THROW(StreamOrder(shards(), {}, k2, first.cursor()), bt::Error);  // another K than saved
}

TEST_F(Order, HttpShardsGiveTheLocalSequence) {
  if (!have_http_streams()) GTEST_SKIP() << "this build has no libcurl";
  bt::data::testing::LoopbackHttp http(dir_->path() + "/");
  http.drop_after = 5000;
  http.drops_left = 3;
  ShardOptions so;
  so.stream.retry_pause_ms = 1;
  StreamOrder local(shards(), so, {}), remote(expand_shard_pattern(http.url("shard-{000000..000005}.tar")), so, {});
  EXPECT_EQ(take(local, 70), take(remote, 70));
  EXPECT_GE(http.range_requests, 3);
}

TEST_F(Order, FewerShardsThanRanksIsAnError) {
  StreamOrderOptions o{42, 0, 8, 4};
  EXPECT_THROW(StreamOrder(shards(), {}, o), bt::Error);
}

// Issue 53, item 5: the data a resume must match. Two sets of `aws s3 cp ... -` commands (whose text after the last
// '/' or space is "-" alike) differ; files and URLs count by name, in order (a moved folder, another port: the same).
TEST(StreamIdentity, CommandsCountWholeAndFilesByName) {
  auto id = [](std::vector<std::string> shards) {
    return StreamWindowDataset(std::move(shards), {}, {}, std::nullopt, {}).identity();
  };
  const std::string a = id({"pipe:aws s3 cp s3://a/s-0.tar -", "pipe:aws s3 cp s3://a/s-1.tar -"});
  EXPECT_NE(a, id({"pipe:aws s3 cp s3://b/s-0.tar -", "pipe:aws s3 cp s3://b/s-1.tar -"}));
  EXPECT_NE(a, id({"pipe:aws s3 cp s3://a/s-0.tar -"}));
  EXPECT_EQ(a, id({"pipe:aws s3 cp s3://a/s-0.tar -", "pipe:aws s3 cp s3://a/s-1.tar -"}));
  EXPECT_EQ(id({"http://127.0.0.1:8000/d/s-0.tar"}), id({"http://127.0.0.1:9000/d/s-0.tar"}));
  EXPECT_EQ(id({"/data/d/s-0.tar"}), id({"/mnt/moved/s-0.tar"}));
  EXPECT_NE(id({"/data/d/s-0.tar"}), id({"/data/d/s-1.tar"}));
  EXPECT_NE(id({"http://h/d/s-0.tar", "http://h/d/s-1.tar"}), id({"http://h/d/s-1.tar", "http://h/d/s-0.tar"}));
}

}  // namespace
