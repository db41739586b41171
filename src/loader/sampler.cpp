#include "loader/sampler.h"

#include <algorithm>
#include <deque>
#include <numeric>

#include "common/error.h"

namespace bt::loader {

uint64_t mix64(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

namespace {

// A splitmix64 stream: tiny, fully specified, so orders are the same with every standard library.
struct SplitMix {
  uint64_t state;
  uint64_t next() { return mix64(state++ * 0x9e3779b97f4a7c15ULL); }
  // Uniform in [0, range), without modulo bias (Lemire's multiply-and-reject).
  uint64_t below(uint64_t range) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * range;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < range) {
      uint64_t threshold = (0 - range) % range;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * range;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
};

void shuffle_range(std::vector<size_t>& v, size_t begin, size_t end, uint64_t seed) {
  SplitMix rng{seed};
  for (size_t i = end - begin; i > 1; --i) std::swap(v[begin + i - 1], v[begin + rng.below(i)]);
}

}  // namespace

void shuffle_rows(std::vector<size_t>& v, size_t begin, size_t end, uint64_t seed) {
  shuffle_range(v, begin, end, seed);
}

std::vector<size_t> locality_order(const std::vector<size_t>& group_ends, size_t window_groups, uint64_t seed,
                                   uint64_t epoch) {
  const size_t ng = group_ends.size();
  std::vector<size_t> groups(ng);
  std::iota(groups.begin(), groups.end(), size_t{0});
  // Streams distinct from the fully random shuffle's (which uses hash_combine(seed, epoch) directly).
  const uint64_t base = hash_combine(hash_combine(seed, epoch), 0x6c6f63616c697479ULL);  // "locality"
  shuffle_range(groups, 0, ng, base);
  std::vector<size_t> order;
  order.reserve(ng ? group_ends.back() : 0);
  const size_t k = std::max<size_t>(window_groups, 1);
  for (size_t w = 0; w * k < ng; ++w) {
    const size_t begin = order.size();
    for (size_t j = w * k; j < std::min(ng, w * k + k); ++j) {
      const size_t g = groups[j], first = g ? group_ends[g - 1] : 0;
      for (size_t r = first; r < group_ends[g]; ++r) order.push_back(r);
    }
    shuffle_range(order, begin, order.size(), hash_combine(base, w + 1));
  }
  return order;
}

Sampler::Sampler(size_t dataset_size, SamplerOptions options, std::vector<uint32_t> image_ids)
    : n_(dataset_size), opt_(options), image_ids_(std::move(image_ids)) {
  if (opt_.world_size < 1) fail("--world_size must be >= 1 (got ", opt_.world_size, ")");
  if (opt_.rank < 0 || opt_.rank >= opt_.world_size)
    fail("--rank must be in [0, world_size) (got rank ", opt_.rank, ", world_size ", opt_.world_size, ")");
  if (opt_.batch_size < 1) fail("batch size must be >= 1");
  if (!opt_.row_group_ends.empty()) {
    const auto& e = opt_.row_group_ends;
    if (e.back() != n_)
      fail("sampler: row groups cover ", e.back(), " rows but the dataset has ", n_);
    for (size_t g = 0; g < e.size(); ++g)
      if (e[g] <= (g ? e[g - 1] : 0)) fail("sampler: row group ", g, " is empty or out of order (ends at ", e[g], ")");
  }
  if (opt_.mix && opt_.mix->total_rows() != n_)
    fail("sampler: the mix covers ", opt_.mix->total_rows(), " rows but the dataset has ", n_);
  if (opt_.dedupe_images_in_batch && opt_.shuffle && image_ids_.size() != n_)
    fail("sampler: dedupe_images_in_batch needs one image id per row (", image_ids_.size(), " for ", n_, " rows)");
}

size_t Sampler::rows_per_epoch() const {
  return rows_per_rank(opt_.mix ? opt_.mix->length() : n_, opt_.world_size, opt_.drop_last);
}

std::vector<size_t> Sampler::epoch_rows(uint64_t epoch) const {
  std::vector<size_t> order;
  if (opt_.mix) {
    order = mix_epoch_order(*opt_.mix, opt_.shuffle, opt_.seed, epoch);
  } else if (opt_.shuffle && opt_.shuffle_window_groups > 0 && !opt_.row_group_ends.empty()) {
    order = locality_order(opt_.row_group_ends, opt_.shuffle_window_groups, opt_.seed, epoch);
  } else {
    order.resize(n_);
    std::iota(order.begin(), order.end(), size_t{0});
    if (opt_.shuffle && n_ > 1) shuffle_range(order, 0, n_, hash_combine(opt_.seed, epoch));
  }
  const size_t w = static_cast<size_t>(opt_.world_size);
  const size_t per_rank = rows_per_epoch();
  std::vector<size_t> rows;
  rows.reserve(per_rank);
  // Padded position p reads order[p % n]: the same wrap-around padding as DistributedSampler.
  for (size_t k = 0; k < per_rank; ++k)
    rows.push_back(order[(k * w + static_cast<size_t>(opt_.rank)) % order.size()]);
  if (opt_.dedupe_images_in_batch && opt_.shuffle) dedupe_in_batches(rows, image_ids_, opt_.batch_size);
  return rows;
}

namespace {

// Greedy filling can strand duplicates in the last batches (only conflicting rows are left). Swap each
// remaining duplicate with a row of a nearby batch (nearest first) when that removes the duplicate without
// creating one there. The work is capped, so a hopeless input (few distinct images) stays cheap.
void repair_duplicates(std::vector<size_t>& rows, const std::vector<uint32_t>& ids, size_t B) {
  const size_t n = rows.size(), nb = (n + B - 1) / B;
  auto count_in = [&](size_t batch, uint32_t id, size_t except) {
    size_t c = 0;
    for (size_t i = batch * B; i < std::min(n, batch * B + B); ++i) c += (i != except && ids[rows[i]] == id);
    return c;
  };
  constexpr size_t kReach = 16;
  size_t budget = 4'000'000;
  for (size_t t = 0; t < nb && budget > 0; ++t) {
    for (size_t i = t * B; i < std::min(n, t * B + B) && budget > 0; ++i) {
      budget -= std::min(budget, B);
      if (count_in(t, ids[rows[i]], i) == 0) continue;  // not a duplicate
      bool fixed = false;
      for (size_t d = 1; d <= kReach && !fixed && budget > 0; ++d) {
        for (size_t u : {t + d, t - d}) {  // t - d wraps to a huge value when d > t: skipped below
          if (u >= nb || fixed) continue;
          for (size_t j = u * B; j < std::min(n, u * B + B); ++j) {
            budget -= std::min(budget, 2 * B);
            if (count_in(t, ids[rows[j]], i) == 0 && count_in(u, ids[rows[i]], j) == 0) {
              std::swap(rows[i], rows[j]);
              fixed = true;
              break;
            }
          }
        }
      }
    }
  }
}

}  // namespace

void dedupe_in_batches(std::vector<size_t>& rows, const std::vector<uint32_t>& image_ids, size_t batch_size) {
  if (rows.empty() || batch_size < 2) return;
  uint32_t max_id = 0;
  for (size_t r : rows) max_id = std::max(max_id, image_ids.at(r));
  // in_batch[id] == batch number + 1 while that image is in the batch being filled: O(1) membership.
  std::vector<size_t> in_batch(static_cast<size_t>(max_id) + 1, 0);
  // Deferred rows are looked at oldest first, up to a window, so a pathological input (one image
  // everywhere) costs O(n * window) rather than O(n^2).
  const size_t window = 4 * batch_size;
  std::deque<size_t> deferred;
  std::vector<size_t> out;
  out.reserve(rows.size());
  size_t next = 0, batch = 1, filled = 0;
  while (out.size() < rows.size()) {
    size_t pick = SIZE_MAX;
    for (size_t k = 0; k < deferred.size() && k < window; ++k) {
      if (in_batch[image_ids[deferred[k]]] != batch) {
        pick = deferred[k];
        deferred.erase(deferred.begin() + static_cast<std::ptrdiff_t>(k));
        break;
      }
    }
    while (pick == SIZE_MAX && next < rows.size()) {
      size_t r = rows[next++];
      if (in_batch[image_ids[r]] != batch) pick = r;
      else deferred.push_back(r);
    }
    if (pick == SIZE_MAX) {  // every remaining row repeats an image of this batch: unavoidable
      pick = deferred.front();
      deferred.pop_front();
    }
    in_batch[image_ids[pick]] = batch;
    out.push_back(pick);
    if (++filled == batch_size) {
      filled = 0;
      ++batch;
    }
  }
  rows.swap(out);
  repair_duplicates(rows, image_ids, batch_size);
}

}  // namespace bt::loader
