#include "train/checkpoint_manifest.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/file_gate.h"
#include "common/json.h"

namespace bt::train {

namespace fs = std::filesystem;

namespace {

struct Digest {
  uint64_t bytes = 0;
  uint32_t crc = 0;
};

// The file's size and CRC-32 (zlib's), read in 4 MiB chunks; throws "PATH: why" when it cannot be read.
Digest digest(const fs::path& path) {
  uint64_t size = 0;
  const int fd = open_regular_file(path.string(), UINT64_MAX, &size);
  std::vector<unsigned char> buf(4u << 20);
  Digest d;
  uLong crc = crc32(0L, Z_NULL, 0);
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      fail(path.string(), ": cannot read (", why, ")");
    }
    if (n == 0) break;
    crc = crc32(crc, buf.data(), static_cast<uInt>(n));
    d.bytes += static_cast<uint64_t>(n);
  }
  ::close(fd);
  d.crc = static_cast<uint32_t>(crc);
  return d;
}

}  // namespace

void write_checkpoint_manifest(const fs::path& dir, const std::string& except) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != kManifestFile && e.path().filename() != except)
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  nlohmann::json files = nlohmann::json::object();
  for (const std::string& name : names) {
    const Digest d = digest(dir / name);
    files[name] = {{"bytes", d.bytes}, {"crc32", d.crc}};
  }
  const nlohmann::json manifest = {{"format", "bridgetune-manifest-1"}, {"files", files}};
  write_file_atomic(dir / kManifestFile, manifest.dump(1) + "\n");
}

std::string manifest_problem(const fs::path& dir) {
  const fs::path path = dir / kManifestFile;
  std::error_code ec;
  if (!fs::exists(path, ec)) return "";
  nlohmann::json m;
  try {
    m = parse_json_text(read_small_file(path.string()), path.string());
  } catch (const Error& e) {
    return e.what();
  }
  if (!m.is_object() || !m.contains("files") || !m["files"].is_object()) return path.string() + ": not a manifest";
  for (const auto& [name, want] : m["files"].items()) {
    if (name.find('/') != std::string::npos || name == ".." || !want.is_object() || !want.contains("bytes") ||
        !want["bytes"].is_number_unsigned() || !want.contains("crc32") || !want["crc32"].is_number_unsigned())
      return path.string() + ": a bad entry";
    const fs::path file = dir / name;
    if (!fs::exists(file, ec)) return file.string() + ": missing (the manifest lists it)";
    Digest got;
    try {
      got = digest(file);
    } catch (const Error& e) {
      return e.what();
    }
    if (got.bytes != want["bytes"].get<uint64_t>())
      return str(file.string(), ": ", got.bytes, " bytes, the manifest says ", want["bytes"].get<uint64_t>(),
                 " (truncated or replaced)");
    if (got.crc != want["crc32"].get<uint64_t>())
      return file.string() + ": its checksum differs from the manifest (damaged)";
  }
  return "";
}

}  // namespace bt::train
