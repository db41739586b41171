// --model_revision and --cache_dir, the flags every command taking a hub id (org/name) shares (see hub/hub.h), and
// the hub-dataset block of `evaluate` and `encode` (--dataset_name, --dataset_config_name, --split,
// --dataset_revision); their names, defaults and help are the flag table's (cli/flag_table.h).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "cli/flag_table.h"
#include "common/defaults.h"
#include "hub/dataset_files.h"
#include "hub/hub.h"

namespace bt::cli {

// --split of a hub dataset in `evaluate` and `encode` (common/defaults.h decides it).
inline constexpr const char* kDefaultEvalSplit = defaults::kEvalSplit;

struct HubFlags {
  std::string revision = defaults::kHubRevision, cache_dir;
  // A local folder unchanged, or the snapshot folder of hub id `name` in the local Hugging Face cache.
  std::string resolve(const std::string& name, const std::string& flag = "--model_name_or_path") const {
    return name.empty() ? name : hub::resolve(name, hub::RepoType::Model, revision, cache_dir, flag);
  }
};

inline void add_hub_flags(CLI::App& app, std::string* revision, std::string* cache_dir) {
  add_flag(app, flags::kModelRevision, *revision);
  add_flag(app, flags::kCacheDir, *cache_dir);
}

// A hub dataset's split, what `evaluate` and `encode` read instead of a data file.
struct HubDataset {
  std::string name, config, split = kDefaultEvalSplit, revision = defaults::kHubRevision;
  // The split's parquet glob (hub/dataset_files.h), or "" without --dataset_name.
  std::string resolve(const std::string& cache_dir) const {
    return name.empty() ? "" : hub::resolve_dataset_split({name, config, revision, cache_dir}, split);
  }
};

// --dataset_name (in --help's essentials, after `data_flag`, the command's data file flag, which it excludes), then
// the hub flags and the dataset's --dataset_config_name, --split, --dataset_revision.
inline void add_hub_dataset_flags(CLI::App& app, CLI::Option* data_flag, HubDataset* ds, HubFlags* hub) {
  CLI::Option* name = add_flag(app, flags::kDatasetName, ds->name);
  data_flag->excludes(name);
  name->excludes(data_flag);
  add_hub_flags(app, &hub->revision, &hub->cache_dir);
  add_flag(app, flags::kDatasetConfigName, ds->config);
  add_flag(app, flags::kSplit, ds->split);
  add_flag(app, flags::kDatasetRevision, ds->revision);
}

}  // namespace bt::cli
