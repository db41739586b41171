#include "source/source.h"

#include <algorithm>
#include <filesystem>

#include "common/error.h"
#include "data/subset.h"
#include "parquet/parquet_dataset.h"

namespace bt::source {
namespace fs = std::filesystem;

namespace {

// Cuts a source to its first n rows; its locality groups end at n.
Source head(Source s, size_t n) {
  if (n == 0 || n >= s.dataset->size()) return s;
  s.dataset = std::make_shared<data::Subset>(s.dataset, data::first_rows(n));
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
  po.caption_column = o.caption_column.value_or(default_caption_column(data::SourceKind::kParquet));
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

std::string default_caption_column(data::SourceKind kind) {
  return kind == data::SourceKind::kParquet ? "image_description" : "caption";
}

Source open_source(const std::string& path, const SourceOptions& o) {
  const data::SourceKind kind = data::classify_source(path);
  if (kind == data::SourceKind::kParquet) return head(open_parquet(path, o), o.max_rows);
  if (kind == data::SourceKind::kCaptions && !fs::exists(path)) fail(o.flag, " ", path, ": no such file or folder");
  data::CaptionsOptions co;  // tar shards read caption_column and on_bad from it too
  co.image_column = o.image_column;
  co.caption_column = o.caption_column.value_or(default_caption_column(kind));
  co.on_bad_row = o.on_bad;
  co.max_image_bytes = o.max_image_bytes;
  co.max_line_bytes = o.max_line_bytes;
  Source s;
  s.kind = kind;
  s.dataset = data::open_dataset(path, co);
  return head(std::move(s), o.max_rows);
}

SourceOptions source_options(const ReadOptions& read, const std::string& flag, int64_t max_rows, bool locality_order) {
  SourceOptions so;
  static_cast<ReadOptions&>(so) = read;
  so.flag = flag;
  so.max_rows = static_cast<size_t>(std::max<int64_t>(0, max_rows));
  so.locality_order = locality_order;
  return so;
}

Source open_synthetic(const data::SynthOptions& opts) {
  Source s;
  s.dataset = data::synth_dataset(opts);
  return s;
}

}  // namespace bt::source
