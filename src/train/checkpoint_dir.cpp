#include "train/checkpoint_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/error.h"

namespace bt::train {

namespace {

void fsync_fd_path(const fs::path& p, int flags) {
  int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) fail(p.string(), ": cannot open for fsync: ", std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL) fail(p.string(), ": fsync failed: ", std::strerror(err));
}

std::string unique_suffix() { return str(".", ::getpid()); }

}  // namespace

void fsync_file(const fs::path& path) { fsync_fd_path(path, O_RDONLY); }
void fsync_dir(const fs::path& dir) { fsync_fd_path(dir, O_RDONLY | O_DIRECTORY); }

void write_file_atomic(const fs::path& path, std::string_view data) {
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const fs::path tmp = parent / (".tmp-" + path.filename().string() + unique_suffix());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) fail(tmp.string(), ": cannot create (is the folder writable?)");
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    f.flush();
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      fail(path.string(), ": write failed (disk full?)");
    }
  }
  fsync_file(tmp);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    fail(path.string(), ": cannot rename into place");
  }
  fsync_dir(parent);
}

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
  if (fs::exists(final_)) {
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

std::vector<CheckpointRef> list_checkpoints(const fs::path& output_dir) {
  std::vector<CheckpointRef> out;
  std::error_code ec;
  if (!fs::is_directory(output_dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(output_dir, ec)) {
    const std::string name = e.path().filename().string();
    constexpr std::string_view prefix = "checkpoint-";
    if (!e.is_directory() || name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) continue;
    const std::string digits = name.substr(prefix.size());
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        digits.size() > 15)
      continue;
    out.push_back({std::stoll(digits), e.path()});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  return out;
}

fs::path resolve_resume_dir(const std::string& value, const fs::path& output_dir) {
  if (value == "latest") {
    auto cks = list_checkpoints(output_dir);
    if (cks.empty())
      fail("--resume_from_checkpoint latest: no checkpoint-N folder in ", output_dir.string(),
           " (train with --save_steps first, or name a checkpoint folder)");
    return cks.back().path;
  }
  fs::path p(value);
  if (!fs::is_directory(p)) fail("--resume_from_checkpoint: ", value, " is not a folder");
  if (!fs::exists(p / "trainer_state.json"))
    fail("--resume_from_checkpoint: ", value, " has no trainer_state.json (not a bridgetune checkpoint)");
  return p;
}

std::vector<fs::path> rotate_checkpoints(const fs::path& output_dir, int64_t limit) {
  std::vector<fs::path> removed;
  if (limit <= 0) return removed;
  auto cks = list_checkpoints(output_dir);
  const int64_t excess = static_cast<int64_t>(cks.size()) - limit;
  for (int64_t i = 0; i < excess; ++i) {
    std::error_code ec;
    fs::remove_all(cks[i].path, ec);
    removed.push_back(cks[i].path);
  }
  return removed;
}

void remove_stale_staging(const fs::path& output_dir) {
  std::error_code ec;
  if (!fs::is_directory(output_dir, ec)) return;
  std::vector<fs::path> stale, old;
  for (const auto& e : fs::directory_iterator(output_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".tmp-checkpoint-", 0) == 0) stale.push_back(e.path());
    if (name.rfind(".old-checkpoint-", 0) == 0) old.push_back(e.path());
  }
  for (const auto& p : stale) fs::remove_all(p, ec);
  // A kill between "move the old checkpoint-N aside" and "rename the new one in" leaves only the old copy:
  // put it back.
  for (const auto& p : old) {
    std::string name = p.filename().string().substr(5);  // "checkpoint-N.<pid>"
    name = name.substr(0, name.rfind('.'));
    if (!fs::exists(output_dir / name)) fs::rename(p, output_dir / name, ec);
    else fs::remove_all(p, ec);
  }
}

}  // namespace bt::train
