#include "hub/dataset_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "common/error.h"
#include "common/file_gate.h"
#include "common/terminal.h"

#include <sstream>
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

// The `configs:` block of a dataset card's YAML header (README.md), the part the datasets library reads:
//   configs:
//   - config_name: matching
//     default: true                      (optional)
//     data_files:
//     - split: train
//       path: matching/train-*           (or a list of one path: `path:` then `- matching/train-*`)
//   - config_name: other
//     data_files: other/*.parquet        (a single path: the train split)
struct CardConfig {
  bool is_default = false;
  std::map<std::string, std::vector<std::string>> splits;  // split -> path patterns
};

std::string unquote(std::string v) {
  while (!v.empty() && (v.back() == ' ' || v.back() == '\r')) v.pop_back();
  if (v.size() >= 2 && (v[0] == '"' || v[0] == '\'') && v.back() == v[0]) v = v.substr(1, v.size() - 2);
  return v;
}

std::map<std::string, CardConfig> card_configs(const fs::path& root) {
  std::map<std::string, CardConfig> out;
  std::error_code ec;
  if (!fs::exists(root / "README.md", ec)) return out;
  std::istringstream f(bt::read_small_file((root / "README.md").string()));  // never a FIFO or /dev/zero
  std::string line;
  if (!std::getline(f, line) || unquote(line) != "---") return out;  // no YAML header
  bool in_configs = false;
  std::string config, split, key;  // the current config, split and the key awaiting list items
  while (std::getline(f, line)) {
    if (unquote(line) == "---") break;
    if (!line.empty() && line[0] != ' ' && line[0] != '-') {  // a top-level key
      in_configs = line.rfind("configs:", 0) == 0;
      continue;
    }
    if (!in_configs) continue;
    std::string item = line.substr(std::min(line.find_first_not_of(' '), line.size()));
    const bool dash = item.rfind("- ", 0) == 0;
    if (dash) item = item.substr(item.find_first_not_of(' ', 1));
    if (item.empty()) continue;
    size_t colon = item.find(": ");
    if (colon == std::string::npos && item.back() == ':') colon = item.size() - 1;
    if (colon == std::string::npos) {  // a bare list item: a path of the key before
      if (dash && key == "path" && !config.empty()) out[config].splits[split].push_back(unquote(item));
      if (dash && key == "data_files" && !config.empty()) out[config].splits["train"].push_back(unquote(item));
      continue;
    }
    const std::string k = item.substr(0, colon), v = unquote(item.substr(std::min(colon + 2, item.size())));
    key = k;
    if (k == "config_name") config = v, split = "train", out[config];
    else if (config.empty()) continue;
    else if (k == "default") out[config].is_default = v == "true";
    else if (k == "split") split = v;
    else if (k == "path" && !v.empty()) out[config].splits[split].push_back(v);
    else if (k == "data_files" && !v.empty()) out[config].splits["train"].push_back(v);
  }
  return out;
}

// A split of a config declared in the card: its one path pattern, relative to the repository.
std::string card_split_pattern(const fs::path& root, const std::map<std::string, CardConfig>& cards,
                               const std::string& config, const std::string& split, const std::string& split_flag) {
  std::set<std::string> names;
  std::string want = config;
  for (const auto& [name, c] : cards) {
    names.insert(name);
    if (config.empty() && (c.is_default || cards.size() == 1)) want = name;
  }
  if (!cards.count(want))
    fail("--dataset_config_name ", config.empty() ? "(none)" : config, ": ", root.string(),
         " has no such config (configs in its README.md: ", join(names), ")");
  std::set<std::string> splits;
  for (const auto& [name, paths] : cards.at(want).splits) splits.insert(name);
  auto it = cards.at(want).splits.find(split);
  if (it == cards.at(want).splits.end())
    fail(split_flag, " ", split, ": config '", want, "' of ", root.string(),
         " has no such split (splits in its README.md: ", join(splits), ")");
  if (it->second.size() != 1)
    fail(split_flag, " ", split, ": config '", want, "' of ", root.string(), " lists ", it->second.size(),
         " path patterns for it in README.md; bridgetune reads one (give the files as --train_file/--validation_file)");
  // A card names files of its own repository: an absolute path or a `..` step would read outside it.
  const std::string& rel = it->second[0];
  bool outside = rel.empty() || fs::path(rel).is_absolute();
  for (const auto& part : fs::path(rel)) outside = outside || part == "..";
  if (outside)
    fail((root / "README.md").string(), ": data_files of config '", want, "' split ", split, " points outside the ",
         "dataset's folder ('", printable(rel.substr(0, 200)), "'); only paths inside it are read");
  // "matching/train-*" (the contest's card): the parquet files it matches, named so the source factory sees parquet.
  std::string pattern = (root / rel).string();
  if (!pattern.empty() && pattern.back() == '*') pattern += ".parquet";
  return pattern;
}

}  // namespace

std::string dataset_split_pattern(const std::string& repo_dir, const std::string& config, const std::string& split,
                                  const std::string& split_flag) {
  const fs::path root(repo_dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) fail("--dataset_name ", repo_dir, ": no such folder");
  // The dataset card's configs, when it declares them, win over the layout (as in the datasets library).
  if (const auto cards = card_configs(root); !cards.empty())
    return card_split_pattern(root, cards, config, split, split_flag);
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
