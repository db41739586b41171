// Files that readers see whole or not at all: every file bridgetune writes for others to read (model weights,
// configs, run logs, result files, plots) goes through write_file_atomic.
//
// Contract:
//  - The bytes go to a temp file beside `path` (atomic_temp_path: DIR/.tmp-NAME.<pid>), which is fsynced and
//    renamed over `path`, then DIR is fsynced: a reader sees the old file or the new one, never a part, and once
//    this returns the new file survives a power cut.
//  - Any failure (cannot create, write -- disk full --, fsync, rename) throws bt::Error naming `path` and the
//    reason, after removing the temp file; `path` keeps its old contents (or stays absent).
//  - A kill mid-write can leave the temp file: folders that may hold one are cleaned by name (".tmp-" prefix,
//    train/checkpoint_dir.h's remove_stale_staging).
#pragma once
#include <filesystem>
#include <string_view>
#include <vector>

namespace bt {

void write_file_atomic(const std::filesystem::path& path, const std::vector<std::string_view>& chunks);
inline void write_file_atomic(const std::filesystem::path& path, std::string_view data) {
  write_file_atomic(path, std::vector<std::string_view>{data});
}

// DIR/.tmp-NAME.<pid> for DIR/NAME: hidden, one per process, so concurrent writers never share a temp file.
std::filesystem::path atomic_temp_path(const std::filesystem::path& path);

// fsync of a file, or of a folder (making the renames in it durable); bt::Error on failure.
void fsync_file(const std::filesystem::path& path);
void fsync_dir(const std::filesystem::path& dir);

}  // namespace bt
