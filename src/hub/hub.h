// Offline resolution of Hugging Face Hub ids to folders of the local hub cache, by huggingface_hub's rules
// (never touches the network; libtorch-free).
//
//   cache root: cache_dir if given, else $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub,
//               else $HOME/.cache/huggingface/hub
//   repo folder: <root>/<models|datasets>--<org>--<name>
//   revision:    a 40-hex commit names snapshots/<commit> directly; anything else (default "main") is a ref whose
//                file refs/<revision> holds the commit
//   result:      <repo folder>/snapshots/<commit>
// resolve() returns an existing local folder unchanged (local folders win, as in from_pretrained). Anything
// missing throws one bt::Error naming where it looked and the `huggingface-cli download` command that fetches it.
#pragma once
#include <string>

namespace bt::hub {

enum class RepoType { Model, Dataset };

// The hub cache root these rules pick (cache_dir wins when non-empty). Does not check that it exists.
std::string cache_root(const std::string& cache_dir = "");

// True for "name" or "org/name" made of the characters the Hub allows (letters, digits, '-', '_', '.'),
// not starting with '.', '/' or '~'.
bool is_repo_id(const std::string& s);

// A local folder, or the snapshot folder of hub id `name_or_path` at `revision`. `flag` (e.g.
// "--model_name_or_path") prefixes error messages when given.
std::string resolve(const std::string& name_or_path, RepoType type = RepoType::Model,
                    const std::string& revision = "main", const std::string& cache_dir = "",
                    const std::string& flag = "");

}  // namespace bt::hub
