// --model_revision and --cache_dir, the flags every command taking a hub id (org/name) shares (see hub/hub.h).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "hub/hub.h"

namespace bt::cli {

// --split of a hub dataset in `evaluate` and `encode`: HF's evaluation split (what `train --do_eval` reads), decided
// here once. The contest's test split is one `--split test` away.
inline constexpr const char* kDefaultEvalSplit = "validation";

struct HubFlags {
  std::string revision = "main", cache_dir;
  // A local folder unchanged, or the snapshot folder of hub id `name` in the local Hugging Face cache.
  std::string resolve(const std::string& name, const std::string& flag = "--model_name_or_path") const {
    return name.empty() ? name : hub::resolve(name, hub::RepoType::Model, revision, cache_dir, flag);
  }
};

inline void add_hub_flags(CLI::App& app, std::string* revision, std::string* cache_dir) {
  app.add_option("--model_revision", *revision, "Hub ids: branch, tag or commit of the local HF cache copy")
      ->capture_default_str();
  app.add_option("--cache_dir", *cache_dir,
                 "Hub ids: the HF hub cache (default $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub)");
}

}  // namespace bt::cli
