// Row-mapped views of a Dataset (PyTorch's Subset): position i of the view reads row row(i) of the base, every
// Dataset call forwarded. The one forwarding view: the first N rows (--max_train_samples), the distinct-image rows
// an evaluation embeds, and the loader's global order (loader/global_order.h) are all RowMappedViews.
//
// Contract: the view shares the base (shared_ptr) and is as thread-safe as the base and its row(); row(i) must be
// a valid row of the base for every i < size().
#pragma once
#include <cstddef>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"

namespace bt::data {

class RowMappedView : public Dataset {
 public:
  const std::string& caption(size_t i) const override { return base_->caption(row(i)); }
  const std::string& image_key(size_t i) const override { return base_->image_key(row(i)); }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override { base_->read_image(row(i), bytes); }
  std::string describe(size_t i) const override { return base_->describe(row(i)); }
  bool is_bad(size_t i) const override { return base_->is_bad(row(i)); }
  std::string bad_reason(size_t i) const override { return base_->bad_reason(row(i)); }

 protected:
  explicit RowMappedView(std::shared_ptr<const Dataset> base) : base_(std::move(base)) {}
  virtual size_t row(size_t i) const = 0;
  const Dataset& base() const { return *base_; }

 private:
  std::shared_ptr<const Dataset> base_;
};

// A fixed list of rows of the base, in the given order (repeats allowed).
class Subset final : public RowMappedView {
 public:
  Subset(std::shared_ptr<const Dataset> base, std::vector<size_t> rows)
      : RowMappedView(std::move(base)), rows_(std::move(rows)) {}
  size_t size() const override { return rows_.size(); }

 private:
  size_t row(size_t i) const override { return rows_[i]; }
  std::vector<size_t> rows_;
};

// Rows 0 .. n-1: HF's select(range(n)).
inline std::vector<size_t> first_rows(size_t n) {
  std::vector<size_t> rows(n);
  std::iota(rows.begin(), rows.end(), size_t{0});
  return rows;
}

}  // namespace bt::data
