// Concurrency of the data sources (run under TSan via the `threads` label): read_image() from many threads,
// and the parallel synth renderer.
#include <gtest/gtest.h>

#include <thread>

#include "data/captions_dataset.h"
#include "data/synth.h"
#include "test_util.h"

using namespace bt::data;
using bt::data::testing::TempDir;

namespace {

SynthOptions tiny(bool tar) {
  SynthOptions o;
  o.n = 16;
  o.seed = 11;
  o.min_width = 48;
  o.max_width = 80;
  o.threads = 4;
  o.tar = tar;
  o.shard_size = 5;
  return o;
}

void read_concurrently(const Dataset& ds) {
  std::vector<std::vector<uint8_t>> first(ds.size());
  for (size_t i = 0; i < ds.size(); ++i) ds.read_image(i, first[i]);
  std::vector<std::thread> pool;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&, t] {
      std::vector<uint8_t> bytes;
      for (int rep = 0; rep < 5; ++rep)
        for (size_t i = t; i < ds.size(); i += 2) {
          ds.read_image(i, bytes);
          mismatches[t] += bytes != first[i];
        }
    });
  for (auto& th : pool) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

}  // namespace

TEST(DataThreads, CaptionsAndTarDatasetsReadConcurrently) {
  TempDir a, b;
  write_synth(a.path(), tiny(false));  // rendered on 4 threads
  write_synth(b.path(), tiny(true));
  auto folder = open_dataset(a.path()), tar = open_dataset(b.path());
  ASSERT_EQ(folder->size(), 16u);
  ASSERT_EQ(tar->size(), 16u);
  read_concurrently(*folder);
  read_concurrently(*tar);
  std::vector<uint8_t> x, y;
  for (size_t i = 0; i < 16; ++i) {
    folder->read_image(i, x);
    tar->read_image(i, y);
    EXPECT_EQ(x, y);
  }
}
