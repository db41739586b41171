// Throughput of WebDataset shards read locally vs streamed over HTTP from a loopback server (tests/data/
// loopback_http.h), interleaved, medians and the ratio. Two ways, as the code reads them:
//   sequential: every shard through one ShardReader after the other (open_file vs open_location(URL));
//   dataset:    the whole set as train/validation open it: TarDataset (index + pread of every image) vs
//               StreamedDataset (4 shards streamed at once into memory).
//   loader:     what a training epoch sees: open + one epoch of the parallel loader (decode, 224 px eval
//               transform, 2 workers) over synthetic JPEG shards (data::write_synth), local vs HTTP
//               (StreamedDataset: evaluate / encode, a mix).
//   window:     the same rows as streamed training reads them: StreamWindowDataset (data/stream_window.h, bounded
//               memory, the trainer's window) over HTTP vs the indexed local shards.
// Usage: bench_stream [shards=8] [MiB per shard=32] [rounds=3] [loader rows=1200]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/shard_stream.h"
#include "data/synth.h"
#include "loader/loader.h"
#include "data/stream_window.h"
#include "data/streamed_dataset.h"
#include "data/tar_dataset.h"
#include "loopback_http.h"
#include "test_util.h"

using namespace bt::data;
using Clock = std::chrono::steady_clock;

namespace {

void write_shard(const std::string& path, int shard, size_t mib) {
  uint64_t x = 88172645463325252ULL + uint64_t(shard);
  bt::data::testing::TarMembers members;
  for (size_t i = 0, bytes = 0; bytes < (mib << 20); ++i) {
    std::string img(60000 + (i * 7919) % 80000, '\0');  // ~100 KB "images": incompressible bytes, not decoded here
    for (char& c : img) c = char((x ^= x << 13, x ^= x >> 7, x ^= x << 17));
    bytes += img.size();
    std::string key = std::to_string(shard * 100000 + int(i));
    members.emplace_back(key + ".jpg", std::move(img));
    members.emplace_back(key + ".txt", "caption " + key);
  }
  bt::data::testing::write_file(path, bt::data::testing::tar_of(members));
}

double sequential(const std::vector<std::string>& shards, size_t& bytes) {
  auto t0 = Clock::now();
  bytes = 0;
  TarSample t;
  for (const auto& s : shards) {
    auto r = ShardReader::open_location(s);
    while (r->next(t)) bytes += t.image.size();
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double dataset(const std::vector<std::string>& shards, bool streamed, size_t& bytes) {
  auto t0 = Clock::now();
  bytes = 0;
  std::unique_ptr<Dataset> ds;
  if (streamed) ds = StreamedDataset::open(shards);
  else ds = TarDataset::open(shards);
  std::vector<uint8_t> img;
  for (size_t i = 0; i < ds->size(); ++i) ds->read_image(i, img), bytes += img.size();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double loader_epoch(const std::vector<std::string>& shards, bool streamed, size_t& rows) {
  auto t0 = Clock::now();
  std::shared_ptr<const Dataset> ds;
  if (streamed) ds = StreamedDataset::open(shards);
  else ds = TarDataset::open(shards);
  bt::loader::LoaderOptions o;
  o.num_workers = 2;
  o.batch_size = 32;
  o.transform.image_size = 224;
  o.decoded_cache_mb = 0;
  bt::loader::Loader l(ds, o);
  l.start_epoch(0);
  rows = 0;
  while (auto b = l.next()) rows += size_t(b->size);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// One epoch's rows of streamed training: the loader over the window, freeing each batch's rows as it is consumed
// (what the trainer does after each step).
double window_epoch(const std::vector<std::string>& shards, size_t rows) {
  auto t0 = Clock::now();
  StreamWindowOptions w;
  w.length = rows, w.window = (4 + 1 + 6) * 32, w.boundary = 32;  // (prefetch + accumulation + 6) x batch
  auto ds = std::make_shared<StreamWindowDataset>(shards, ShardOptions{}, StreamOrderOptions{}, std::nullopt, w);
  bt::loader::LoaderOptions o;
  o.num_workers = 2;
  o.batch_size = 32;
  o.transform.image_size = 224;
  o.decoded_cache_mb = 0;
  o.sampler.shuffle = false;
  o.sampler.dedupe_images_in_batch = false;
  bt::loader::Loader l(ds, o);
  l.start_epoch(0);
  while (auto b = l.next()) ds->release_before(b->first_sample + size_t(b->size));
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 8;
  const size_t mib = argc > 2 ? size_t(std::atoi(argv[2])) : 32;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  const std::string dir = (std::filesystem::temp_directory_path() / "bt_bench_stream").string();
  std::filesystem::create_directories(dir);
  std::vector<std::string> local, remote;
  bt::data::testing::LoopbackHttp http(dir + "/");
  for (int s = 0; s < n; ++s) {
    const std::string name = "shard-" + std::to_string(1000 + s) + ".tar";
    if (!std::filesystem::exists(dir + "/" + name)) write_shard(dir + "/" + name, s, mib);
    local.push_back(dir + "/" + name);
    remote.push_back(http.url(name));
  }
  std::printf("%d shards x %zu MiB in %s (page cache warm after the first round)\n", n, mib, dir.c_str());
  size_t bytes = 0;
  sequential(local, bytes);  // warm the page cache
  for (bool ds : {false, true}) {
    std::vector<double> tl, th;
    for (int r = 0; r < rounds; ++r) {  // interleaved: local, http, local, http, ...
      tl.push_back(ds ? dataset(local, false, bytes) : sequential(local, bytes));
      th.push_back(ds ? dataset(remote, true, bytes) : sequential(remote, bytes));
    }
    const double mb = double(bytes) / (1 << 20), l = mb / median(tl), h = mb / median(th);
    std::printf("%-10s local %8.1f MiB/s   http %8.1f MiB/s   http/local %.3f  (medians of %d, %.0f MiB each)\n",
                ds ? "dataset" : "sequential", l, h, h / l, rounds, mb);
  }
  const size_t loader_rows = argc > 4 ? size_t(std::atoi(argv[4])) : 1200;
  const std::string jdir = dir + "/jpeg";
  if (!std::filesystem::exists(jdir + "/shard-000000.tar")) {
    SynthOptions so;
    so.n = loader_rows;
    so.tar = true;
    so.shard_size = loader_rows / 4;
    so.min_width = 320, so.max_width = 640;
    write_synth(jdir, so);
  }
  std::vector<std::string> jl = expand_shard_pattern(jdir + "/shard-{000000..000003}.tar"), jh;
  for (int s = 0; s < 4; ++s) jh.push_back(http.url("jpeg/shard-00000" + std::to_string(s) + ".tar"));
  std::vector<double> tl, th;
  size_t rows = 0;
  for (int r = 0; r < rounds; ++r) {
    tl.push_back(loader_epoch(jl, false, rows));
    th.push_back(loader_epoch(jh, true, rows));
  }
  const double l = double(rows) / median(tl), h = double(rows) / median(th);
  std::printf("%-10s local %8.1f img/s   http %8.1f img/s   http/local %.3f  (medians of %d, %zu images, open + "
              "1 epoch, 2 workers, 224 px)\n", "loader", l, h, h / l, rounds, rows);
  std::vector<double> tw, tt;
  for (int r = 0; r < rounds; ++r) {  // interleaved: indexed local tar, then the streamed-training window over HTTP
    tt.push_back(loader_epoch(jl, false, rows));
    tw.push_back(window_epoch(jh, rows));
  }
  const double lt = double(rows) / median(tt), hw = double(rows) / median(tw);
  std::printf("%-10s local %8.1f img/s   http %8.1f img/s   http/local %.3f  (medians of %d, %zu images, streamed "
              "training's window vs indexed local shards)\n", "window", lt, hw, hw / lt, rounds, rows);
  return 0;
}
