#include "loader/global_order.h"

#include "common/error.h"
#include "loader/loader.h"

namespace bt::loader {

namespace {
SamplerOptions single_process(SamplerOptions s) {
  s.rank = 0;
  s.world_size = 1;
  return s;
}
}  // namespace

GlobalOrderView::GlobalOrderView(std::shared_ptr<const data::Dataset> base, SamplerOptions sampler)
    : RowMappedView(std::move(base)),
      sampler_(this->base().size(), single_process(sampler),
               sampler.dedupe_images_in_batch ? loader::image_ids_of(this->base()) : std::vector<uint32_t>{}) {
  set_epoch(0);
}

void GlobalOrderView::set_epoch(uint64_t epoch) {
  if (epoch == epoch_) return;
  auto order = std::make_shared<const std::vector<size_t>>(sampler_.epoch_rows(epoch));
  std::lock_guard lk(mu_);
  order_ = std::move(order);
  epoch_ = epoch;
}

size_t GlobalOrderView::row(size_t i) const {
  std::lock_guard lk(mu_);
  if (i >= order_->size()) fail("GlobalOrderView: position ", i, " out of range (", order_->size(), " rows)");
  return (*order_)[i];
}

}  // namespace bt::loader
