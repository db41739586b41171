// Streamed shards: http:// (against a loopback server that drops, stalls and ignores Range) and pipe:COMMAND read
// the same samples as the local files; failures are retried, resumed, skipped and counted, or one line naming the URL.
#include <gtest/gtest.h>

#include <chrono>

#include "common/error.h"
#include "data/byte_stream.h"
#include "data/captions_dataset.h"
#include "data/shard_stream.h"
#include "data/streamed_dataset.h"
#include "data/tar_dataset.h"
#include "../common/user_typed.h"
#include "loopback_http.h"
#include "test_util.h"

using namespace bt::data;
using bt::data::testing::LoopbackHttp;
using bt::data::testing::TempDir;
using bt::data::testing::write_file;
using bt::test::typed;

// A build without libcurl has no http:// streams (data/http_stream_stub.cpp); its pipe: tests still run.
#define NEED_HTTP() \
  if (!have_http_streams()) GTEST_SKIP() << "this build has no libcurl"

namespace {

// n samples KEY.jpg (pseudo-random bytes, ~20 KB, so a shard spans several libarchive blocks) + KEY.txt.
std::string make_shard(int shard, int n) {
  uint64_t x = 0x9e3779b97f4a7c15ULL * uint64_t(shard + 1);
  bt::data::testing::TarMembers members;
  for (int i = 0; i < n; ++i) {
    std::string key = std::to_string(shard * 1000 + i);
    std::string img(size_t(15000 + 997 * i), '\0');
    for (char& c : img) c = char((x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 56);
    members.emplace_back(key + ".jpg", std::move(img));
    members.emplace_back(key + ".txt", "caption " + key);
  }
  return bt::data::testing::tar_of(members);
}

struct Sample {
  std::string caption;
  std::vector<uint8_t> image;
  bool operator==(const Sample&) const = default;
};

std::vector<Sample> read_all(const std::string& loc, const ShardOptions& o, BadRows* bad = nullptr) {
  auto r = ShardReader::open_location(loc, o);
  std::vector<Sample> out;
  TarSample t;
  while (r->next(t)) out.push_back({t.caption, t.image});
  if (bad) *bad = r->bad();
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "(no error)";
}

class Streams : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int s = 0; s < 4; ++s) write_file(dir_ / name(s), make_shard(s, 6));
    fast_.stream.retries = 2;
    fast_.stream.retry_pause_ms = 1;
  }
  static std::string name(int s) { return "shard-00" + std::to_string(s) + ".tar"; }
  std::vector<Sample> local(int s) { return read_all(dir_ / name(s), {}); }

  TempDir dir_;
  LoopbackHttp http_{dir_.path() + "/"};
  ShardOptions fast_;  // retries without pauses
};

TEST_F(Streams, UrlPatternReadsTheLocalSamples) {
  NEED_HTTP();
  auto remote = StreamedDataset::open(expand_shard_pattern(http_.url("shard-{000..003}.tar")), fast_);
  auto local = TarDataset::open(expand_shard_pattern(dir_ / "shard-{000..003}.tar"), fast_);
  ASSERT_EQ(remote->size(), 24u);
  ASSERT_EQ(remote->size(), local->size());
  std::vector<uint8_t> a, b;
  for (size_t i = 0; i < local->size(); ++i) {
    EXPECT_EQ(remote->caption(i), local->caption(i));
    remote->read_image(i, a), local->read_image(i, b);
    EXPECT_EQ(a, b) << i;
  }
  EXPECT_EQ(remote->image_key(0), http_.url("shard-000.tar") + ":0");
  // The same through the one entry point the CLI uses.
  EXPECT_EQ(classify_source(http_.url("shard-{000..003}.tar")), SourceKind::kShards);
  EXPECT_EQ(open_dataset(http_.url("shard-{000..003}.tar"))->size(), 24u);
}

TEST_F(Streams, DroppedConnectionResumesWithRange) {
  NEED_HTTP();
  http_.drop_after = 30000;  // inside the second image
  http_.drops_left = 2;
  EXPECT_EQ(read_all(http_.url(name(1)), fast_), local(1));
  EXPECT_EQ(http_.requests, 3);
  EXPECT_EQ(http_.range_requests, 2);
}

TEST_F(Streams, StalledServerTimesOutAndResumes) {
  NEED_HTTP();
  ShardOptions o = fast_;
  o.stream.low_speed_time_s = 1;
  http_.stall_after = 50000;
  http_.stall_ms = 1600;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(read_all(http_.url(name(2)), o), local(2));
  EXPECT_EQ(http_.range_requests, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST_F(Streams, ShardThatKeepsFailingIsSkippedOrNamed) {
  NEED_HTTP();
  http_.drop_after = 30000;
  http_.drops_left = 1000;
  ShardOptions skip = fast_;
  skip.on_bad = OnBad::kSkip;
  BadRows bad;
  auto got = read_all(http_.url(name(0)), skip, &bad);
  EXPECT_LT(got.size(), 6u);
  ASSERT_EQ(bad.count, 1u);
  EXPECT_NE(bad.first[0].find(http_.url(name(0))), std::string::npos) << bad.first[0];
  EXPECT_NE(bad.first[0].find("after 2 retries"), std::string::npos) << bad.first[0];
  std::string e = error_of([&] { read_all(http_.url(name(0)), fast_); });
  EXPECT_EQ(e.rfind(http_.url(name(0)), 0), 0u) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  // A whole set under skip: the failing shard is counted once, the others are read.
  http_.drops_left = 0;
  auto ds = StreamedDataset::open({http_.url(name(0)), http_.url("missing.tar"), http_.url(name(1))}, skip);
  EXPECT_EQ(ds->size(), 12u);
  EXPECT_EQ(ds->bad_rows().count, 1u);
}

TEST_F(Streams, NotFoundFailsAtOnce) {
  NEED_HTTP();
  std::string e = error_of([&] { read_all(http_.url("nope.tar"), fast_); });
  EXPECT_EQ(e, http_.url("nope.tar") + ": HTTP 404");
  EXPECT_EQ(http_.requests, 1);  // a 404 is not retried
}

TEST_F(Streams, ServerIgnoringRangeIsRefused) {
  NEED_HTTP();
  http_.drop_after = 30000;
  http_.drops_left = 1;
  http_.ignore_range = true;
  std::string e = error_of([&] { read_all(http_.url(name(0)), fast_); });
  EXPECT_NE(e.find("did not resume at byte"), std::string::npos) << e;
}

TEST_F(Streams, PipeCommandReadsAndFailuresNameTheCommand) {
  EXPECT_EQ(read_all(typed("pipe:cat " + dir_ / name(3)), fast_), local(3));
  const std::string bad = typed("pipe:cat " + dir_ / name(3) + "; exit 3");
  std::string e = error_of([&] { read_all(bad, fast_); });
  EXPECT_EQ(e.rfind(bad + ": the command exited with status 3", 0), 0u) << e;
  // A command that breaks mid-way is rerun, and what was read already is skipped.
  const std::string mark = dir_ / "ran_once";
  const std::string flaky = typed("pipe:if [ -e " + mark + " ]; then cat " + dir_ / name(3) + "; else touch " +
                                  mark + "; head -c 30000 " + dir_ / name(3) + "; exit 1; fi");
  EXPECT_EQ(read_all(flaky, fast_), local(3));
  // Brace patterns expand inside commands too, and a whole set reads in order.
  auto ds = StreamedDataset::open(expand_shard_pattern(typed("pipe:cat " + dir_ / "shard-{002..003}.tar")), fast_);
  EXPECT_EQ(ds->size(), 12u);
  EXPECT_EQ(ds->caption(6), "caption 3000");
}

TEST_F(Streams, QuietPipeCommandTimesOut) {
  StreamOptions o;
  o.retries = 0;
  o.low_speed_time_s = 1;
  auto s = open_byte_stream(typed("pipe:sleep 30"), o);
  char c;
  auto t0 = std::chrono::steady_clock::now();
  std::string e = error_of([&] { s->read(&c, 1); });
  EXPECT_EQ(e, "pipe:sleep 30: no output for 1 s (the command was stopped)");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST_F(Streams, PipeClosedEarlyStopsTheCommand) {
  auto s = open_byte_stream(typed("pipe:cat /dev/zero | cat"), {});
  char buf[4096];
  EXPECT_GT(s->read(buf, sizeof buf), 0u);
  auto t0 = std::chrono::steady_clock::now();
  s.reset();  // would hang (or leak the pipeline) if the group were not killed
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

// Issue 53, item 4: two bytes a second stays above curl's low-speed limit (1 byte/s) forever; the shard's deadline
// (the time its reader waits, every retry included) ends it in bounded time with one line naming the URL.
TEST_F(Streams, ADrippingServerMeetsTheDeadline) {
  NEED_HTTP();
  ShardOptions o = fast_;
  o.stream.low_speed_time_s = 1;
  o.stream.deadline_s = 2;
  http_.drip_ms = 500;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = error_of([&] { read_all(http_.url(name(0)), o); });
  EXPECT_EQ(e.rfind(http_.url(name(0)) + ": still downloading after the deadline of 2 s, at byte ", 0), 0u) << e;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(6));
  EXPECT_EQ(http_.requests, 1);  // a deadline is not retried
}

TEST_F(Streams, MemoryCapIsOneClearLine) {
  NEED_HTTP();
  std::string e = error_of([&] { StreamedDataset::open({http_.url(name(0))}, fast_, 50000); });
  EXPECT_NE(e.find("pass the limit of"), std::string::npos) << e;
  EXPECT_EQ(e.rfind(http_.url(name(0)), 0), 0u) << e;
}

}  // namespace
