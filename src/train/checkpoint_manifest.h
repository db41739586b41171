// A checkpoint's manifest (bridgetune_manifest.json): every file of the folder with its size and CRC-32, written
// into the staging folder after the files and before the state file that marks it complete. Verifying it finds
// what a header check cannot: a truncated or missing weights/optimizer file, bytes overwritten inside the tensors.
// Checkpoints written before manifests existed have none and verify as before (headers only).
#pragma once
#include <filesystem>
#include <string>

namespace bt::train {

inline constexpr const char* kManifestFile = "bridgetune_manifest.json";

// Lists every regular file of `dir` (but the manifest and `except`, the state file written after it).
void write_checkpoint_manifest(const std::filesystem::path& dir, const std::string& except);

// Why `dir` does not match its manifest ("FILE: N bytes, the manifest says M", "FILE: missing", "FILE: its
// checksum differs from the manifest (damaged)"), or "" when it does or has none. Reads every listed file once.
std::string manifest_problem(const std::filesystem::path& dir);

}  // namespace bt::train
