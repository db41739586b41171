// The parquet files of one config and split of a Hugging Face dataset repository (a hub cache snapshot or a local
// folder of the same layout), found the way the `datasets` library finds them in a repository without a loading
// script: CONFIG/SPLIT-*.parquet (CONFIG/SPLIT.parquet), CONFIG/SPLIT/*.parquet, and for the default config
// data/SPLIT-*.parquet. libtorch-free.
//
// Contract: returns a glob pattern (ParquetDataset expands it) matching at least one file. An unknown config names
// the configs the folder holds; an unknown split names the splits of that config; both name the folder.
#pragma once
#include <string>

namespace bt::hub {

std::string dataset_split_pattern(const std::string& repo_dir, const std::string& config, const std::string& split);

}  // namespace bt::hub
