// Multi-process runs with --dedupe_images_in_batch: the dedupe has to see the GLOBAL batch (all ranks' rows of
// one step), both so that no image repeats across ranks (a false negative once embeddings are gathered) and so
// that W processes x batch B read exactly the rows of 1 process x batch W*B.
//
// GlobalOrderView is a Dataset whose position p reads row order[p] of the base dataset, where order is the
// single-process epoch order (shuffle + dedupe in batches of W*B, Sampler with world_size 1). A loader
// over the view with shuffle and dedupe off and the usual sharding (rank r takes positions r, r+W, ...) then
// gives rank r its share of each global batch. set_epoch() switches the order; it is safe while loader workers
// still read (they see either order; only rows of the new epoch are ever delivered after start_epoch).
// Augmentation seeds (--train_transform train) follow view positions, so they differ from a 1-process run.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "data/dataset.h"
#include "loader/sampler.h"

namespace bt::loader {

class GlobalOrderView final : public data::Dataset {
 public:
  // sampler: seed, shuffle, dedupe and batch_size (= the global batch) of the single-process order.
  GlobalOrderView(std::shared_ptr<const data::Dataset> base, SamplerOptions sampler);
  void set_epoch(uint64_t epoch);

  size_t size() const override { return base_->size(); }
  const std::string& caption(size_t i) const override { return base_->caption(row(i)); }
  const std::string& image_key(size_t i) const override { return base_->image_key(row(i)); }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override { base_->read_image(row(i), bytes); }
  std::string describe(size_t i) const override { return base_->describe(row(i)); }
  bool is_bad(size_t i) const override { return base_->is_bad(row(i)); }
  std::string bad_reason(size_t i) const override { return base_->bad_reason(row(i)); }

 private:
  size_t row(size_t i) const;
  std::shared_ptr<const data::Dataset> base_;
  Sampler sampler_;
  mutable std::mutex mu_;
  std::shared_ptr<const std::vector<size_t>> order_;
  uint64_t epoch_ = UINT64_MAX;
};

}  // namespace bt::loader
