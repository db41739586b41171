// bt::source: the one place a data source is opened. Given what the CLI accepts for a dataset (a captions file
// or folder with JSONL/CSV, a .parquet file / folder / glob, WebDataset tar shards as a path, folder or brace/glob
// pattern) or synthetic options, it returns the Dataset and the epoch order to read it in. train, bench,
// bench-loader and every later caller (Python binding, hub datasets, evaluation) go through here, so a new
// format touches this file only. Sits above data/ and parquet/ and next to loader/; never depends on libtorch.
//
// Contract:
//  - open_source() picks the reader with data::classify_source(). Captions and shards honour on_bad (kSkip:
//    bad rows are kept and counted, see data/captions_dataset.h, data/tar_dataset.h); parquet reads
//    image_column / caption_column.
//  - A missing captions file/folder fails with "FLAG PATH: no such file or folder"; every other error is the
//    reader's own one-line bt::Error naming the file.
//  - Epoch order: parquet with locality_order on gets the row-group locality order (ParquetDataset::
//    prepare_locality_order, which also trims its page cache to the window); every other source, and parquet with
//    locality_order off, reads fully random rows. apply_order() copies that order into loader::SamplerOptions.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/defaults.h"
#include "data/bad_rows.h"
#include "data/captions_dataset.h"
#include "data/dataset.h"
#include "data/synth.h"
#include "loader/sampler.h"

namespace bt::source {

// How every dataset of a command is read, as its flags give it (--image_column, --caption_column,
// --on_bad_sample, --max_image_bytes, --max_line_bytes): train, evaluate and encode hold one and open each of their
// datasets with source_options() below.
struct ReadOptions {
  std::string image_column = defaults::kImageColumn;  // captions files and parquet
  // Captions files, tar shards' key.json, parquet; unset: the format's own (default_caption_column), decided here
  // once for every command and the Python module alike. "" reads no caption column (parquet matching splits).
  std::optional<std::string> caption_column;
  data::OnBad on_bad = data::OnBad::kError;
  // Image files and tar members larger than this are bad samples (never read whole).
  uint64_t max_image_bytes = data::kDefaultMaxImageBytes;
  // A JSONL line or CSV record longer than this is an error naming the file and line (--max_line_bytes).
  uint64_t max_line_bytes = data::kDefaultMaxLineBytes;
};

// One dataset's options: how the command reads datasets, and what is particular to this one.
struct SourceOptions : ReadOptions {
  // Parquet locality: rows shuffled within windows of this many row groups; -1 auto, 0 fully random.
  int shuffle_window_row_groups = -1;
  // false: no locality order and the page cache left as opened (e.g. a validation set read once in order).
  bool locality_order = true;
  std::string flag = "--data";  // the flag named in errors
  // parquet: small per-row columns read beside the captions (ParquetDatasetOptions::extra_columns), e.g. the
  // contest's caption_choices and label; read them through a cast to parquet::ParquetDataset.
  std::vector<std::string> parquet_extra_columns;
  // > 0: only the first max_rows rows (the HF examples' --max_train_samples / --max_eval_samples: select(range(N))).
  // The dataset is then a view of the reader's, so a cast to the reader type (parquet extras) needs max_rows 0.
  size_t max_rows = 0;
};

// The caption column a format is read with when none is given: parquet "image_description" (the HF New Yorker
// Caption Contest's, as the reference example reads it), every other format "caption".
std::string default_caption_column(data::SourceKind kind);
// What --caption_column's help says, for every command that registers it.
inline constexpr const char* kCaptionColumnHelp =
    "The caption column (default: parquet image_description, as the HF New Yorker set; otherwise caption)";

struct Source {
  std::shared_ptr<const data::Dataset> dataset;
  data::SourceKind kind = data::SourceKind::kCaptions;
  // The epoch order's locality groups (empty: fully random); see loader::SamplerOptions.
  std::vector<size_t> row_group_ends;
  size_t shuffle_window_groups = 0;
  // Several datasets mixed (source/mixed_source.h): the interleaving; null for one dataset.
  std::shared_ptr<const loader::MixPlan> mix;

  void apply_order(loader::SamplerOptions& sampler) const {
    sampler.row_group_ends = row_group_ends;
    sampler.shuffle_window_groups = shuffle_window_groups;
    sampler.mix = mix;
  }
  // Rows an epoch reads (before sharding): the mix's epoch length, else the dataset's rows.
  size_t epoch_rows() const { return mix ? mix->length() : dataset->size(); }
};

Source open_source(const std::string& path, const SourceOptions& opts = {});

// The options of a dataset read for `flag` (--train_file, --validation_file, --data ...) with at most max_rows rows
// (<= 0: all); locality_order as in SourceOptions. The one place a command's ReadOptions become a dataset's.
SourceOptions source_options(const ReadOptions& read, const std::string& flag, int64_t max_rows = 0,
                             bool locality_order = false);

// The generated cartoons in memory (data::synth_dataset), read fully random.
Source open_synthetic(const data::SynthOptions& opts);

}  // namespace bt::source
