// Streamed shards read whole into memory (see streamed_dataset.h).
#include "data/streamed_dataset.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "common/error.h"

namespace bt::data {

namespace {

struct ShardResult {
  std::vector<TarSample> samples;
  BadRows bad;
  std::exception_ptr error;
};

// What a sample costs while it is held: every byte kept (the key, the caption, the image) and the row around them.
uint64_t sample_bytes(const TarSample& t) {
  return t.key.size() + t.caption.size() + t.image.size() + sizeof(TarSample);
}

}  // namespace

std::unique_ptr<StreamedDataset> StreamedDataset::open(const std::vector<std::string>& shards, const ShardOptions& opts,
                                                       uint64_t max_bytes, int parallel) {
  std::vector<ShardResult> res(shards.size());
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> total{0};
  std::atomic<bool> over{false};
  auto work = [&] {
    for (size_t s; !over && (s = next++) < shards.size();) {
      try {
        auto r = ShardReader::open_location(shards[s], opts);
        TarSample t;
        while (r->next(t)) {
          if ((total += sample_bytes(t)) > max_bytes) {
            over = true;
            fail(shards[s], ": streamed shards are held in memory when read whole (validation, encode, a "
                 "dataset mix) and these pass the limit of ", max_bytes >> 20, " MiB (images, captions and keys); copy "
                 "them to a local folder");
          }
          res[s].samples.push_back(std::move(t));
        }
        res[s].bad = r->bad();
      } catch (...) {
        res[s].error = std::current_exception();
        over = true;  // the first error in shard order is rethrown below; the others stop early
      }
    }
  };
  const int n = std::max(1, std::min<int>(parallel, int(shards.size())));
  std::vector<std::thread> threads;
  for (int i = 1; i < n; ++i) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();

  std::unique_ptr<StreamedDataset> ds(new StreamedDataset());
  for (auto& r : res) {
    if (r.error) std::rethrow_exception(r.error);
    for (auto& t : r.samples) {
      ds->bytes_ += sample_bytes(t);
      ds->rows_.push_back({std::move(t.key), std::move(t.caption), std::move(t.image)});
    }
    ds->bad_.merge(r.bad);
  }
  if (ds->rows_.empty())
    fail(shards.empty() ? std::string("no shards") : shards[0], ": no usable samples in ", shards.size(), " shard(s)");
  return ds;
}

}  // namespace bt::data
