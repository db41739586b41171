// The parquet files of one config and split of a Hugging Face dataset repository (a hub cache snapshot or a local
// folder of the same layout), found the way the `datasets` library finds them in a repository without a loading
// script: the `configs:` block of the dataset card (README.md's YAML header: config_name, default, data_files with
// split/path) when it has one, else by layout: CONFIG/SPLIT-*.parquet (CONFIG/SPLIT.parquet), CONFIG/SPLIT/*.parquet,
// and for the default config data/SPLIT-*.parquet. libtorch-free.
//
// Contract: returns a glob pattern (ParquetDataset expands it) matching at least one file. An unknown config names
// the configs the folder holds; an unknown split names the splits of that config; both name the folder.
#pragma once
#include <string>

namespace bt::hub {

// `split_flag` names what asked for the split in the unknown-split error (e.g. "--split", "--do_eval").
std::string dataset_split_pattern(const std::string& repo_dir, const std::string& config, const std::string& split,
                                  const std::string& split_flag = "--split");

// A dataset as the --dataset_name / --dataset_config_name / --dataset_revision / --cache_dir flags name it.
struct DatasetRef {
  std::string name, config, revision = "main", cache_dir;
};

// The parquet glob of one split of `ref`: its hub id resolved in the local HF cache (hub.h; a local folder is
// taken as it is), then dataset_split_pattern(). Used by `evaluate` and `train` alike.
std::string resolve_dataset_split(const DatasetRef& ref, const std::string& split,
                                  const std::string& split_flag = "--split");

}  // namespace bt::hub
