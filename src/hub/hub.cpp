#include "hub/hub.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "common/file_gate.h"

#include <sstream>

namespace bt::hub {
namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// "~/x" as the shell would expand it (huggingface_hub expands user paths in these variables too).
std::string expand_user(const std::string& p) {
  if (p.size() >= 1 && p[0] == '~' && (p.size() == 1 || p[1] == '/')) return env("HOME") + p.substr(1);
  return p;
}

bool is_commit_hash(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string download_hint(const std::string& id, RepoType type, const std::string& revision) {
  std::string cmd = "huggingface-cli download ";
  if (type == RepoType::Dataset) cmd += "--repo-type dataset ";
  cmd += id;
  if (revision != "main") cmd += " --revision " + revision;
  return cmd;
}

}  // namespace

std::string cache_root(const std::string& cache_dir) {
  if (!cache_dir.empty()) return expand_user(cache_dir);
  if (auto v = env("HF_HUB_CACHE"); !v.empty()) return expand_user(v);
  if (auto v = env("HF_HOME"); !v.empty()) return (fs::path(expand_user(v)) / "hub").string();
  if (auto v = env("XDG_CACHE_HOME"); !v.empty()) return (fs::path(expand_user(v)) / "huggingface" / "hub").string();
  return (fs::path(env("HOME")) / ".cache" / "huggingface" / "hub").string();
}

bool is_repo_id(const std::string& s) {
  if (s.empty() || s.size() > 200 || s[0] == '.' || s[0] == '/' || s[0] == '~' || s.back() == '/') return false;
  int slashes = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '/') {
      if (++slashes > 1 || (i + 1 < s.size() && s[i + 1] == '.')) return false;
      continue;
    }
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              c == '.';
    if (!ok) return false;
  }
  return s.find("..") == std::string::npos && s.find("--") == std::string::npos;
}

std::string resolve(const std::string& name_or_path, RepoType type, const std::string& revision,
                    const std::string& cache_dir, const std::string& flag) {
  const std::string who = flag.empty() ? name_or_path : flag + " " + name_or_path;
  std::error_code ec;
  if (fs::is_directory(name_or_path, ec)) return name_or_path;
  if (!is_repo_id(name_or_path))
    bt::fail(who, ": no such folder, and not a Hugging Face hub id (org/name)");
  const std::string rev = revision.empty() ? "main" : revision;
  std::string folder = type == RepoType::Dataset ? "datasets--" : "models--";
  for (char c : name_or_path) folder += c == '/' ? std::string("--") : std::string(1, c);
  const fs::path repo = fs::path(cache_root(cache_dir)) / folder;
  const std::string hint = download_hint(name_or_path, type, rev);
  if (!fs::is_directory(repo, ec))
    bt::fail(who, ": not a local folder and not in the Hugging Face cache (looked for ", repo.string(),
             "); fetch it with `", hint, "` or set HF_HUB_CACHE / --cache_dir");
  std::string commit = rev;
  if (!is_commit_hash(rev)) {
    if (rev.find("..") != std::string::npos) bt::fail(who, ": bad revision '", rev, "'");
    const fs::path ref = repo / "refs" / rev;
    std::error_code exists_ec;
    std::istringstream in(fs::exists(ref, exists_ec) ? bt::read_small_file(ref.string(), 4096) : std::string());
    if (!std::getline(in, commit))
      bt::fail(who, ": revision '", rev, "' is not in the Hugging Face cache (no ", ref.string(),
               "); fetch it with `", hint, "`");
    while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r' || commit.back() == ' '))
      commit.pop_back();
    if (!is_commit_hash(commit))
      bt::fail(ref.string(), ": does not hold a 40-hex commit hash (a damaged cache: fetch again with `", hint, "`)");
  }
  const fs::path snap = repo / "snapshots" / commit;
  if (!fs::is_directory(snap, ec))
    bt::fail(who, ": revision '", rev, "' has no snapshot in the Hugging Face cache (no ", snap.string(),
             "); fetch it with `", hint, "`");
  return snap.string();
}

}  // namespace bt::hub
