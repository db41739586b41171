// Multi-process runs with --dedupe_images_in_batch: the dedupe has to see the GLOBAL batch (all ranks' rows of
// one step), both so that no image repeats across ranks (a false negative once embeddings are gathered) and so
// that W processes x batch B read exactly the rows of 1 process x batch W*B.
//
// GlobalOrderView is a row-mapped view (data/subset.h) whose position p reads row order[p] of the base dataset,
// where order is the single-process epoch order (shuffle + dedupe in batches of W*B, Sampler with world_size 1). A loader
// over the view with shuffle and dedupe off and the usual sharding (rank r takes positions r, r+W, ...) then
// gives rank r its share of each global batch. set_epoch() switches the order; it is safe while loader workers
// still read (they see either order; only rows of the new epoch are ever delivered after start_epoch).
// Augmentation seeds (--train_transform train) follow view positions, so they differ from a 1-process run.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "data/subset.h"
#include "loader/sampler.h"

namespace bt::loader {

class GlobalOrderView final : public data::RowMappedView {
 public:
  // sampler: seed, shuffle, dedupe and batch_size (= the global batch) of the single-process order.
  GlobalOrderView(std::shared_ptr<const data::Dataset> base, SamplerOptions sampler);
  void set_epoch(uint64_t epoch);

  // The base's rows, or a mix's epoch length (sampler.h: SamplerOptions::mix).
  size_t size() const override { return sampler_.rows_per_epoch(); }

 private:
  size_t row(size_t i) const override;
  Sampler sampler_;
  mutable std::mutex mu_;
  std::shared_ptr<const std::vector<size_t>> order_;
  uint64_t epoch_ = UINT64_MAX;
};

}  // namespace bt::loader
