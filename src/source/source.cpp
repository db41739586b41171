#include "source/source.h"

#include <filesystem>

#include "common/error.h"
#include "parquet/parquet_dataset.h"

namespace bt::source {
namespace fs = std::filesystem;

namespace {

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
  if (kind == data::SourceKind::kParquet) return open_parquet(path, o);
  if (kind == data::SourceKind::kCaptions && !fs::exists(path)) fail(o.flag, " ", path, ": no such file or folder");
  data::CaptionsOptions co;  // tar shards read caption_column and on_bad from it too
  co.image_column = o.image_column;
  co.caption_column = o.caption_column;
  co.on_bad_row = o.on_bad;
  co.max_image_bytes = o.max_image_bytes;
  Source s;
  s.kind = kind;
  s.dataset = data::open_dataset(path, co);
  return s;
}

Source open_synthetic(const data::SynthOptions& opts) {
  Source s;
  s.dataset = data::synth_dataset(opts);
  return s;
}

}  // namespace bt::source
