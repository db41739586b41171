// --model_revision and --cache_dir, the flags every command taking a hub id (org/name) shares (see hub/hub.h); their
// names, defaults and help are the flag table's (cli/flag_table.h).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "cli/flag_table.h"
#include "common/defaults.h"
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

}  // namespace bt::cli
