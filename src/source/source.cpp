#include "source/source.h"

#include <filesystem>

#include "common/error.h"
#include "parquet/parquet_dataset.h"

namespace bt::source {
namespace fs = std::filesystem;

namespace {

// The first n rows of another dataset.
class HeadDataset : public data::Dataset {
 public:
  HeadDataset(std::shared_ptr<const data::Dataset> base, size_t n) : base_(std::move(base)), n_(n) {}
  size_t size() const override { return n_; }
  const std::string& caption(size_t i) const override { return base_->caption(i); }
  const std::string& image_key(size_t i) const override { return base_->image_key(i); }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override { base_->read_image(i, bytes); }
  std::string describe(size_t i) const override { return base_->describe(i); }
  bool is_bad(size_t i) const override { return base_->is_bad(i); }
  std::string bad_reason(size_t i) const override { return base_->bad_reason(i); }

 private:
  std::shared_ptr<const data::Dataset> base_;
  size_t n_;
};

// Cuts a source to its first n rows; its locality groups end at n.
Source head(Source s, size_t n) {
  if (n == 0 || n >= s.dataset->size()) return s;
  s.dataset = std::make_shared<HeadDataset>(s.dataset, n);
  auto& ends = s.row_group_ends;  // groups covering [0, n), the last one cut at n
  if (!ends.empty()) {
    while (!ends.empty() && ends.back() >= n) ends.pop_back();
    ends.push_back(n);
  }
  return s;
}

Source open_parquet(const std::string& path, const SourceOptions& o) {
  parquet::ParquetDatasetOptions po;
  po.image_column = o.image_column;
  po.caption_column = o.caption_column;
  po.extra_columns = o.parquet_extra_columns;
  auto pq = std::make_shared<parquet::ParquetDataset>(std::vector<std::string>{path}, po);
  Source s;
  s.kind = data::SourceKind::kParquet;
  // Shuffle row groups, then rows within a window of groups, so each decoded page serves all its rows.
  if (o.locality_order) s.shuffle_window_groups = pq->prepare_locality_order(o.shuffle_window_row_groups, s.row_group_ends);
  s.dataset = std::move(pq);
  return s;
}

}  // namespace

Source open_source(const std::string& path, const SourceOptions& o) {
  const data::SourceKind kind = data::classify_source(path);
  if (kind == data::SourceKind::kParquet) return head(open_parquet(path, o), o.max_rows);
  if (kind == data::SourceKind::kCaptions && !fs::exists(path)) fail(o.flag, " ", path, ": no such file or folder");
  data::CaptionsOptions co;  // tar shards read caption_column and on_bad from it too
  co.image_column = o.image_column;
  co.caption_column = o.caption_column;
  co.on_bad_row = o.on_bad;
  co.max_image_bytes = o.max_image_bytes;
  co.max_line_bytes = o.max_line_bytes;
  Source s;
  s.kind = kind;
  s.dataset = data::open_dataset(path, co);
  return head(std::move(s), o.max_rows);
}

Source open_synthetic(const data::SynthOptions& opts) {
  Source s;
  s.dataset = data::synth_dataset(opts);
  return s;
}

}  // namespace bt::source
