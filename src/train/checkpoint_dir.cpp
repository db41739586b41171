#include "train/checkpoint_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/file_gate.h"
#include "common/json.h"
#include "common/paths.h"
#include "common/terminal.h"
#include "train/checkpoint_manifest.h"
#include "train/model_selection.h"

namespace bt::train {

namespace {

std::string unique_suffix() { return str(".", ::getpid()); }

// NAME.tmp.<pid>: a half-written file of an atomic write interrupted by a kill, as bridgetune named them before
// common/atomic_file.h (whose .tmp-NAME.<pid> the ".tmp-" prefix catches): an older run's leftover.
bool is_tmp_pid_file(const std::string& name) {
  const size_t at = name.rfind(".tmp.");
  if (at == std::string::npos || at + 5 == name.size()) return false;
  return std::all_of(name.begin() + at + 5, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

StagedDir::StagedDir(const fs::path& parent, const std::string& final_name)
    : parent_(parent), tmp_(parent / (".tmp-" + final_name + unique_suffix())), final_(parent / final_name) {
  std::error_code ec;
  fs::remove_all(tmp_, ec);
  fs::create_directories(tmp_, ec);
  if (ec) fail(tmp_.string(), ": cannot create checkpoint staging folder: ", ec.message());
}

StagedDir::~StagedDir() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
}

void StagedDir::commit() {
  for (const auto& e : fs::directory_iterator(tmp_))
    if (e.is_regular_file()) fsync_file(e.path());
  fsync_dir(tmp_);
  std::error_code ec;
  fs::path old;
  if (fs::exists(fs::symlink_status(final_, ec))) {  // a broken link of that name is moved aside too
    // Move the previous folder of the same name aside first: rename() cannot replace a non-empty folder.
    old = parent_ / (".old-" + final_.filename().string() + unique_suffix());
    fs::remove_all(old, ec);
    fs::rename(final_, old, ec);
    if (ec) fail(final_.string(), ": cannot move the previous checkpoint aside: ", ec.message());
  }
  fs::rename(tmp_, final_, ec);
  if (ec) fail(final_.string(), ": cannot rename the checkpoint into place: ", ec.message());
  committed_ = true;
  fsync_dir(parent_);
  if (!old.empty()) fs::remove_all(old, ec);
}

std::vector<CheckpointRef> list_checkpoints(const fs::path& output_dir, std::vector<std::string>* broken) {
  std::vector<CheckpointRef> out;
  std::error_code ec;
  if (!fs::is_directory(output_dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(output_dir, ec)) {
    const std::string name = e.path().filename().string();
    constexpr std::string_view prefix = "checkpoint-";
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) continue;
    const std::string digits = name.substr(prefix.size());
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        digits.size() > 15)
      continue;
    // The error_code form: a link loop named checkpoint-N must not throw out of the listing (it blocked resume).
    std::error_code ec2;
    if (!e.is_directory(ec2)) {
      const std::string why = ec2 ? path_error_reason(ec2) : broken_link_problem(e.path());
      if (broken && !why.empty()) broken->push_back(name + ": " + why);
      continue;
    }
    out.push_back({std::stoll(digits), e.path()});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  return out;
}

namespace {

// A small JSON file of the run's own (a trainer state) through the file gate; `why` gets the reason it cannot be
// read (a FIFO, /dev/zero or a huge file in its place) and the result is then discarded JSON.
nlohmann::json read_state_json(const fs::path& path, std::string* why) {
  try {
    return try_parse_json(read_small_file(path.string()));
  } catch (const Error& e) {
    if (why) *why = e.what();
    return nlohmann::json::value_t::discarded;
  }
}

// "" when `path` is a safetensors file whose header is well-formed JSON inside the file.
std::string safetensors_problem(const fs::path& path) {
  uint64_t size = 0;
  int fd = -1;
  try {
    fd = open_regular_file(path.string(), UINT64_MAX, &size);  // the file gate: a FIFO or device is refused
  } catch (const Error&) {
    return path.filename().string() + " is not a regular file";
  }
  struct CloseFd {
    int fd;
    ~CloseFd() { ::close(fd); }
  } closer{fd};
  uint8_t len8[8];
  if (size < 8 || ::pread(fd, len8, 8, 0) != 8) return path.filename().string() + " is truncated";
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | len8[i];
  if (n > size - 8 || n > (uint64_t(100) << 20)) return path.filename().string() + " has a bad header length";
  std::string header(static_cast<size_t>(n), '\0');
  if (n && ::pread(fd, header.data(), n, 8) != static_cast<ssize_t>(n)) return path.filename().string() + " is truncated";
  auto j = try_parse_json(header);
  if (j.is_discarded() || !j.is_object()) return path.filename().string() + " has a corrupt header";
  return "";
}

}  // namespace

fs::path resume_state_file(const fs::path& dir) {
  const fs::path state = dir / kResumeStateFile, legacy = dir / "trainer_state.json";
  std::error_code ec;
  if (fs::exists(state, ec) || !fs::exists(legacy, ec)) return state;
  const auto j = read_state_json(legacy, nullptr);
  const bool ours = !j.is_discarded() && j.is_object() && j.value("format", "") == "bridgetune-trainer-state-1";
  return ours ? legacy : state;
}

std::string checkpoint_problem(const fs::path& dir) {
  const fs::path state = resume_state_file(dir);
  const std::string name = state.filename().string();
  std::error_code ec0;
  if (!fs::exists(state, ec0)) return "no " + name;
  std::string why;
  const auto j = read_state_json(state, &why);
  if (!why.empty()) return why;
  if (j.is_discarded() || !j.is_object() || !j.contains("global_step") || !j["global_step"].is_number_integer())
    return name + " is not a valid trainer state";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".safetensors")
      if (std::string why = safetensors_problem(e.path()); !why.empty()) return why;
  return manifest_problem(dir);  // sizes and checksums, where the checkpoint has a manifest
}

fs::path resolve_resume_dir(const std::string& value, const fs::path& output_dir) {
  if (value == "latest" || value == "latest_or_none") {
    // Before choosing: a kill mid-replace may have left the newest checkpoint under .old-*.
    remove_stale_staging(output_dir);
    std::vector<std::string> broken;
    auto cks = list_checkpoints(output_dir, &broken);
    for (const std::string& b : broken) std::fprintf(stderr, "warning: skipping %s\n", printable(b).c_str());
    if (cks.empty() && broken.empty() && value == "latest_or_none") {
      std::printf("--resume_from_checkpoint latest_or_none: no checkpoint in %s yet: starting from scratch\n",
                  printable(output_dir.string()).c_str());
      return {};
    }
    if (cks.empty())
      fail("--resume_from_checkpoint latest: no checkpoint-N folder in ", output_dir.string(),
           broken.empty() ? " (train with --save_steps first, or name a checkpoint folder)"
                          : " but broken links (see the warnings above): remove them, or start over with "
                            "--overwrite_output_dir");
    for (auto it = cks.rbegin(); it != cks.rend(); ++it) {
      const std::string why = checkpoint_problem(it->path);
      if (why.empty()) return it->path;
      std::fprintf(stderr, "warning: skipping %s: %s\n", printable(it->path.string()).c_str(), printable(why).c_str());
    }
    fail("--resume_from_checkpoint latest: none of the ", cks.size(), " checkpoint folders in ", output_dir.string(),
         " is complete (see the warnings above); start over with --overwrite_output_dir");
  }
  fs::path p(value);
  std::error_code ec;
  if (!fs::is_directory(p, ec)) {
    const std::string link = broken_link_problem(p);
    fail("--resume_from_checkpoint ", value, ": ", !link.empty() ? link : ec ? path_error_reason(ec) : "not a folder");
  }
  if (!fs::exists(resume_state_file(p), ec))
    fail("--resume_from_checkpoint: ", value, " has no ", kResumeStateFile, " (not a bridgetune checkpoint)");
  if (const std::string why = checkpoint_problem(p); !why.empty())
    fail("--resume_from_checkpoint ", value, ": ", why, " (name an intact checkpoint, or 'latest' to take the newest one)");
  return p;
}

std::vector<fs::path> rotate_checkpoints(const fs::path& output_dir, int64_t limit, int64_t keep_step) {
  std::vector<fs::path> removed;
  if (limit <= 0) return removed;
  const std::vector<CheckpointRef> cks = list_checkpoints(output_dir);
  std::vector<int64_t> steps;
  for (const CheckpointRef& c : cks) steps.push_back(c.step);
  for (int64_t step : checkpoints_to_delete(steps, limit, keep_step)) {
    const fs::path ck = std::find_if(cks.begin(), cks.end(), [&](const CheckpointRef& c) { return c.step == step; })->path;
    // Rename first (atomic): a kill during the slow remove_all leaves a .del-* folder, never a partial
    // checkpoint-K that list_checkpoints() would offer.
    const fs::path doomed = output_dir / (".del-" + ck.filename().string() + unique_suffix());
    std::error_code ec;
    fs::rename(ck, doomed, ec);
    if (ec) continue;
    fsync_dir(output_dir);
    fs::remove_all(doomed, ec);
    removed.push_back(ck);
  }
  return removed;
}

void remove_stale_staging(const fs::path& output_dir) {
  std::error_code ec;
  if (!fs::is_directory(output_dir, ec)) return;
  std::vector<fs::path> stale, old;
  for (const auto& e : fs::directory_iterator(output_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".tmp-", 0) == 0 || name.rfind(".del-checkpoint-", 0) == 0 || is_tmp_pid_file(name))
      stale.push_back(e.path());
    if (name.rfind(".old-checkpoint-", 0) == 0) old.push_back(e.path());
  }
  for (const auto& p : stale) fs::remove_all(p, ec);
  // A kill between "move the old checkpoint-N aside" and "rename the new one in" leaves only the old copy:
  // put it back.
  for (const auto& p : old) {
    std::string name = p.filename().string().substr(5);  // "checkpoint-N.<pid>"
    name = name.substr(0, name.rfind('.'));
    if (!fs::exists(fs::symlink_status(output_dir / name, ec))) fs::rename(p, output_dir / name, ec);
    else fs::remove_all(p, ec);
  }
}

void move_files_into(const fs::path& staging, const fs::path& dest) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(staging))
    if (e.is_regular_file()) files.push_back(e.path());
  for (const auto& f : files) fsync_file(f);
  for (const auto& f : files) {
    std::error_code ec;
    fs::rename(f, dest / f.filename(), ec);
    if (ec) fail((dest / f.filename()).string(), ": cannot move into place: ", ec.message());
  }
  fsync_dir(dest);
  std::error_code ec;
  fs::remove_all(staging, ec);
}

const char* const kFinishedRunFiles[7] = {"train_results.json", "all_results.json",   "eval_results.json",
                                         "test_results.json",  "trainer_state.json", "training_args.json",
                                         "training_plot.png"};

void publish_final_model(const fs::path& staging, const fs::path& output_dir) {
  for (const char* f : kFinishedRunFiles) {
    std::error_code ec;
    fs::remove(output_dir / f, ec);
    if (ec) fail((output_dir / f).string(), ": cannot remove the earlier run's file: ", ec.message());
  }
  fsync_dir(output_dir);
  move_files_into(staging, output_dir);
}

}  // namespace bt::train
