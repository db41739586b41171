#include "hub/dataset_files.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <vector>

#include "common/error.h"
#include "hub/hub.h"

namespace fs = std::filesystem;

namespace bt::hub {

namespace {

bool is_parquet(const fs::path& p) { return p.extension() == ".parquet"; }

// The split a file or folder directly under a config folder stands for: "train-00000-of-00002.parquet" -> train,
// "test.parquet" -> test, a folder "validation/" holding parquet files -> validation; "" otherwise.
std::string split_of(const fs::directory_entry& e) {
  std::error_code ec;
  const std::string name = e.path().filename().string();
  if (e.is_regular_file(ec) && is_parquet(e.path())) {
    const std::string stem = e.path().stem().string();
    const size_t dash = stem.find('-');
    return dash == std::string::npos ? stem : stem.substr(0, dash);
  }
  if (e.is_directory(ec))
    for (const auto& f : fs::directory_iterator(e.path(), ec))
      if (is_parquet(f.path())) return name;
  return "";
}

std::set<std::string> splits_in(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (std::string s = split_of(e); !s.empty()) out.insert(s);
  return out;
}

std::string join(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

std::string dataset_split_pattern(const std::string& repo_dir, const std::string& config, const std::string& split,
                                  const std::string& split_flag) {
  const fs::path root(repo_dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) fail("--dataset_name ", repo_dir, ": no such folder");
  // The configs: folders holding parquet splits ("data" is the default config's folder).
  std::set<std::string> configs;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory(ec) && e.path().filename().string()[0] != '.' && !splits_in(e.path()).empty())
      configs.insert(e.path().filename().string() == "data" ? "default" : e.path().filename().string());
  const std::string want = config.empty() ? (configs.size() == 1 ? *configs.begin() : "default") : config;
  if (!configs.count(want))
    fail("--dataset_config_name ", config.empty() ? "(none)" : config, ": ", repo_dir, " has no such config (configs: ",
         join(configs), ")");
  const fs::path dir = root / (want == "default" && fs::is_directory(root / "data", ec) ? "data" : want);
  const std::set<std::string> splits = splits_in(dir);
  if (!splits.count(split))
    fail(split_flag, " ", split, ": config '", want, "' of ", repo_dir, " has no such split (splits: ", join(splits),
         ")");
  if (fs::is_directory(dir / split, ec)) return (dir / split / "*.parquet").string();
  if (fs::exists(dir / (split + ".parquet"), ec)) return (dir / (split + ".parquet")).string();
  return (dir / (split + "-*.parquet")).string();
}

std::string resolve_dataset_split(const DatasetRef& ref, const std::string& split, const std::string& split_flag) {
  const std::string repo = resolve(ref.name, RepoType::Dataset, ref.revision, ref.cache_dir, "--dataset_name");
  return dataset_split_pattern(repo, ref.config, split, split_flag);
}

}  // namespace bt::hub
