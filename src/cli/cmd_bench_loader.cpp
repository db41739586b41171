// bridgetune bench-loader: samples/s of the full path file -> normalised float batch, per worker count.
// Worker counts are interleaved within each repeat (A B A B ...) and the median of the repeats reported, so
// a noisy machine hurts every configuration alike. Timing starts after max(1, workers) warm-up batches, as
// the Python peer (../shared/peers/torch_loader_bench.py) does.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/flag_table.h"
#include "cli/loader_flags.h"
#include "common/error.h"
#include "common/terminal.h"
#include "data/captions_dataset.h"
#include "loader/loader.h"
#include "source/source.h"

namespace bt::cli {
namespace {

struct BenchArgs {
  std::string data;
  std::vector<int> workers = {0, 1, 2};
  int batch = 32;
  size_t samples = 1024;
  int repeats = 3;
  bool json = false;
  int window_groups = -1;  // parquet locality shuffle: -1 auto, 0 fully random
  loader::LoaderOptions opt;
  source::ReadOptions read;
};

struct Run {
  double samples_per_s = 0;
  double read = 0, decode = 0, transform = 0, normalize = 0, wait = 0;  // seconds, summed over samples
  size_t samples = 0, batches = 0;
  double hit_rate = 0;
  loader::LoaderStats stats;
};

std::shared_ptr<const data::Dataset> open_source(BenchArgs& a) {  // sets a's epoch order (parquet locality)
  source::SourceOptions so = source::source_options(a.read, "--data", 0, /*locality_order=*/true);
  so.shuffle_window_row_groups = a.window_groups;
  source::Source src = source::open_source(a.data, so);
  src.apply_order(a.opt.sampler);
  return src.dataset;
}

// Times one loader.
Run time_loader(loader::Loader& l, const BenchArgs& a, int workers, uint64_t epoch) {
  using Clock = std::chrono::steady_clock;
  l.start_epoch(epoch);
  auto next = [&]() {  // wraps around epochs so --samples may exceed the dataset
    loader::BatchPtr b = l.next();
    if (!b) {
      l.start_epoch(++epoch);
      b = l.next();
      if (!b) fail("--data ", a.data, ": the dataset has no samples");
    }
    return b;
  };
  const int warm = std::max(1, workers);
  for (int i = 0; i < warm; ++i) next();
  const size_t timed = (a.samples + static_cast<size_t>(a.batch) - 1) / static_cast<size_t>(a.batch);
  Run r;
  auto t0 = Clock::now();
  for (size_t i = 0; i < timed; ++i) {
    loader::BatchPtr b = next();
    r.samples += static_cast<size_t>(b->size);
    r.read += b->timing.read_s;
    r.decode += b->timing.decode_s;
    r.transform += b->timing.transform_s;
    r.normalize += b->timing.normalize_s;
    r.wait += b->timing.wait_s;
    ++r.batches;
  }
  double dt = std::chrono::duration<double>(Clock::now() - t0).count();
  r.samples_per_s = static_cast<double>(r.samples) / dt;
  r.stats = l.stats();
  r.hit_rate = r.stats.cache_hit_rate();
  return r;
}

Run run_once(std::shared_ptr<const data::Dataset> ds, const BenchArgs& a, int workers, uint64_t epoch) {
  loader::LoaderOptions o = a.opt;
  o.num_workers = workers;
  o.batch_size = a.batch;
  loader::Loader l(ds, o);
  return time_loader(l, a, workers, epoch);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bench(const BenchArgs& a_in) {
  BenchArgs a = a_in;
  if (a.data.empty()) fail("--data is required: a folder with captions.jsonl, a JSONL/CSV file or tar shards");
  if (a.repeats < 1) fail("--repeats must be >= 1");
  if (a.batch < 1) fail("--batch must be >= 1");
  a.opt.on_bad_sample = a.read.on_bad;  // a bad image is skipped (or stops the run) as a bad row is
  if (a.window_groups < -1) fail("--shuffle_window_row_groups must be >= 0 (got ", a.window_groups, ")");
  auto ds = open_source(a);
  std::vector<std::vector<Run>> runs(a.workers.size());
  for (int rep = 0; rep < a.repeats; ++rep)
    for (size_t i = 0; i < a.workers.size(); ++i) runs[i].push_back(run_once(ds, a, a.workers[i], rep));

  if (!a.json) {
    std::printf("bench-loader: %s, %zu rows, batch %d, image_size %d, %zu samples x %d repeats, cache %zu MB\n",
                a.data.c_str(), ds->size(), a.batch, a.opt.transform.image_size, a.samples, a.repeats,
                a.opt.transform.mode == media::TransformMode::kEval ? a.opt.decoded_cache_mb : size_t{0});
    std::printf("| workers | samples/s (median) | min..max | read ms | decode ms | transform ms | normalize ms |"
                " wait ms/batch | cache hit |\n|---|---|---|---|---|---|---|---|---|\n");
  }
  for (size_t i = 0; i < a.workers.size(); ++i) {
    std::vector<double> sps, read, dec, tr, norm, wait, hit;
    std::string list;
    for (const Run& r : runs[i]) {
      double n = static_cast<double>(r.samples);
      sps.push_back(r.samples_per_s);
      read.push_back(1e3 * r.read / n);
      dec.push_back(1e3 * r.decode / n);
      tr.push_back(1e3 * r.transform / n);
      norm.push_back(1e3 * r.normalize / n);
      wait.push_back(1e3 * r.wait / static_cast<double>(r.batches));
      hit.push_back(r.hit_rate);
      list += str(list.empty() ? "" : ",", std::round(r.samples_per_s * 10) / 10);
    }
    auto [mn, mx] = std::minmax_element(sps.begin(), sps.end());
    if (a.json) {
      std::printf("{\"workers\": %d, \"samples_per_s\": %.2f, \"repeats\": [%s], \"batch\": %d, \"image_size\": %d, "
                  "\"samples\": %zu, \"read_ms\": %.4f, \"decode_ms\": %.4f, \"transform_ms\": %.4f, "
                  "\"normalize_ms\": %.4f, \"wait_ms_per_batch\": %.3f, \"cache_hit_rate\": %.4f, "
                  "\"skipped\": %zu, \"shuffle_window_row_groups\": %zu}\n",
                  a.workers[i], median(sps), list.c_str(), a.batch, a.opt.transform.image_size, a.samples,
                  median(read), median(dec), median(tr), median(norm), median(wait), median(hit),
                  runs[i].back().stats.skipped, a.opt.sampler.shuffle_window_groups);
    } else {
      std::printf("| %d | %.1f | %.1f..%.1f | %.3f | %.3f | %.3f | %.3f | %.2f | %.1f %% |\n", a.workers[i],
                  median(sps), *mn, *mx, median(read), median(dec), median(tr), median(norm), median(wait),
                  100 * median(hit));
    }
    std::fflush(stdout);
  }
  const loader::LoaderStats& st = runs.back().back().stats;
  if (st.skipped) {
    std::fprintf(stderr, "skipped %zu bad samples (last run), first ones:\n", st.skipped);
    for (const auto& s : st.first_skipped) std::fprintf(stderr, "  %s\n", printable(s).c_str());
  }
}

const Registrar reg("bench-loader", "loader throughput (samples/s) per worker count, file -> float batch", 60,
                    [](CLI::App& app) {
                      auto a = std::make_shared<BenchArgs>();
                      a->opt.num_workers = 0;
                      add_flag(app, flags::kData, a->data)->required();
                      add_flag(app, flags::kWorkers, a->workers)->delimiter(',');
                      add_flag(app, flags::kBatch, a->batch);
                      app.add_option("--samples", a->samples, "timed samples per run")->capture_default_str();
                      add_flag(app, flags::kRepeats, a->repeats);
                      add_enum(app, flags::kTransform, a->opt.transform.mode, kTransformWords);
                      add_switch(app, flags::kJson, a->json);
                      add_flag(app, flags::kShuffleWindowRowGroups, a->window_groups);
                      add_loader_flags(app, a->opt, a->read, /*with_workers=*/false);
                      app.callback([a] { bench(*a); });
                    });

}  // namespace
}  // namespace bt::cli
