// Which dataset rows a rank reads in an epoch, and in what order. A pure function of (dataset size, options,
// epoch): it never depends on the number of loader workers, so any worker count sees the same batches.
//
// Contract:
//  - The epoch order is a permutation of [0, n) drawn from (seed, epoch) (or the identity with shuffle off); with
//    several datasets mixed (SamplerOptions::mix) it is mix_order.h's interleaved order instead.
//  - Locality order (row_group_ends non-empty and shuffle_window_groups K > 0, e.g. parquet row groups): the
//    group order is shuffled from (seed, epoch), cut into windows of K consecutive groups, and the rows of
//    each window are shuffled among themselves. So positions [w_begin, w_end) of the global order hold the
//    rows of exactly K groups (fewer in the last window): a reader caching K groups decodes each page once.
//    K = 0 or no groups: fully random. Sharding (below) applies to this global order, so ranks stay
//    disjoint/covering/equal and rank r's i-th row sits near global position i * world_size.
//  - Sharding follows torch's DistributedSampler: without drop_last the order is padded by wrapping around to
//    a multiple of world_size, so every rank gets ceil(n / world_size) rows; with drop_last it is truncated
//    to floor(n / world_size) per rank. Rank r takes positions r, r + world_size, ... Ranks are disjoint
//    apart from the padding and together cover every row.
//  - dedupe_images_in_batch (with shuffle on; an unshuffled order is kept as given) reorders the rank's rows so that no batch of batch_size consecutive positions
//    holds two rows with the same image key where that is avoidable. Greedy with deferral, stable: each
//    slot takes the oldest deferred row whose image is not yet in the batch, else the next row of the order;
//    a row whose image is already in the batch is deferred. Only when nothing left fits (or within the scan
//    window of deferred rows) is a duplicate placed; a final pass then swaps leftover duplicates with rows of
//    nearby batches where that removes them. Depends only on the order and the keys.
//  - Resuming at (epoch, position) is just epoch_rows(epoch) from that position on.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/defaults.h"
#include "loader/mix_order.h"

namespace bt::loader {

// Dedupe is on unless a user turns it off, for every loader (train, bench-loader, the Python DataLoader): with a
// contrastive loss a repeated image in a batch is a false negative.
inline constexpr bool kDedupeImagesInBatchByDefault = true;

struct SamplerOptions {
  uint64_t seed = defaults::kSeed;
  bool shuffle = true;
  int rank = 0;
  int world_size = 1;
  bool drop_last = false;  // sharding: truncate instead of pad
  bool dedupe_images_in_batch = false;  // applies to shuffled orders only (LoaderOptions: on by default)
  size_t batch_size = 32;  // the batch boundaries dedupe works within
  // Locality order: the exclusive end row of each consecutive group covering [0, n) (ascending, last == n);
  // empty: no groups (e.g. from ParquetDataset::row_groups()).
  std::vector<size_t> row_group_ends;
  size_t shuffle_window_groups = 0;  // K groups shuffled together; 0: fully random
  // Several datasets interleaved (loader/mix_order.h): the epoch order is mix_epoch_order's (plan.length() rows of
  // the concatenation, not a permutation), sharded, padded and deduped as above; the locality groups are ignored.
  std::shared_ptr<const MixPlan> mix;
};

// This rank's rows per epoch over `rows` rows (DistributedSampler's share, above): ceil(rows / world_size), or
// floor with drop_last. Sampler::rows_per_epoch and the trainer's step plan both ask this.
inline size_t rows_per_rank(size_t rows, int world_size, bool drop_last = false) {
  const size_t w = static_cast<size_t>(world_size);
  return drop_last ? rows / w : (rows + w - 1) / w;
}

// Rows an epoch reads over a dataset of n rows, before sharding: a mix's epoch length (mix_order.h), else n.
inline size_t epoch_rows(size_t n, const SamplerOptions& s) { return s.mix ? s.mix->length() : n; }

// A loader's sampler options before the user's: dedupe on (kDedupeImagesInBatchByDefault).
inline SamplerOptions loader_sampler_defaults() {
  SamplerOptions s;
  s.dedupe_images_in_batch = kDedupeImagesInBatchByDefault;
  return s;
}

class Sampler {
 public:
  // image_ids[i] identifies row i's image (dense ids); needed only for dedupe, may be empty otherwise.
  Sampler(size_t dataset_size, SamplerOptions options, std::vector<uint32_t> image_ids = {});

  size_t dataset_size() const { return n_; }
  size_t rows_per_epoch() const;  // this rank's share
  const SamplerOptions& options() const { return opt_; }

  // This rank's rows for `epoch`, in order (length rows_per_epoch()).
  std::vector<size_t> epoch_rows(uint64_t epoch) const;

 private:
  size_t n_;
  SamplerOptions opt_;
  std::vector<uint32_t> image_ids_;
};

// Deterministic 64-bit mixing, shared by the sampler (shuffle) and the loader (per-sample seeds).
uint64_t mix64(uint64_t x);
inline uint64_t hash_combine(uint64_t a, uint64_t b) { return mix64(a ^ (mix64(b) + 0x9e3779b97f4a7c15ULL)); }
// The augmentation seed of one sample: the same for any worker count, different per epoch and row.
inline uint64_t sample_seed(uint64_t seed, uint64_t epoch, uint64_t row) {
  return hash_combine(hash_combine(seed, epoch), row);
}

// Fisher-Yates over v[begin, end) from a splitmix stream seeded with `seed` (the sampler's shuffle).
void shuffle_rows(std::vector<size_t>& v, size_t begin, size_t end, uint64_t seed);

// The dedupe pass on its own (exposed for tests): reorders `rows` in place, batches of batch_size.
void dedupe_in_batches(std::vector<size_t>& rows, const std::vector<uint32_t>& image_ids, size_t batch_size);

// The global (unsharded) locality order on its own (exposed for tests): a permutation of [0, group_ends.back()).
std::vector<size_t> locality_order(const std::vector<size_t>& group_ends, size_t window_groups, uint64_t seed,
                                   uint64_t epoch);

}  // namespace bt::loader
