// Captions-file datasets: resolve image paths once at open time, read image files per call.
#include "data/captions_dataset.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <unordered_map>

#include "common/error.h"
#include "data/tar_dataset.h"

namespace fs = std::filesystem;

namespace bt::data {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(),
                                                 [](char a, char b) { return std::tolower(a) == b; });
}

// Reads all of fd into bytes; returns errno on failure, 0 on success.
int read_all(int fd, std::vector<uint8_t>& bytes) {
  struct stat st;
  if (fstat(fd, &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  // One spare byte lets the EOF read land without growing the buffer.
  bytes.resize(st.st_size > 0 ? size_t(st.st_size) + 1 : 0);
  size_t got = 0;
  for (;;) {
    if (got == bytes.size()) {
      // The size may have grown (or st_size was 0 for a pipe): keep reading until EOF.
      if (bytes.size() < got + 65536) bytes.resize(got + 65536);
    }
    ssize_t r = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (r == 0) break;
    got += size_t(r);
  }
  bytes.resize(got);
  return 0;
}

}  // namespace

void read_file(const std::string& path, std::vector<uint8_t>& bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, ": ", std::strerror(errno));
  int err = read_all(fd, bytes);
  ::close(fd);
  if (err) fail(path, ": ", std::strerror(err));
}

std::string read_text_file(const std::string& path) {
  std::vector<uint8_t> b;
  read_file(path, b);
  return std::string(b.begin(), b.end());
}

CaptionsDataset::CaptionsDataset(ParsedCaptions parsed, std::string name, std::string folder)
    : bad_(std::move(parsed.bad)), name_(std::move(name)) {
  images_.emplace_back();
  as_written_.emplace_back();
  std::unordered_map<std::string, uint32_t> index;
  fs::path base(folder);
  rows_.reserve(parsed.rows.size());
  for (auto& r : parsed.rows) {
    Row row{std::move(r.caption), 0, uint32_t(r.line), r.bad, std::move(r.reason)};
    if (!r.bad) {
      fs::path p(r.image);
      std::string key = (p.is_absolute() || folder.empty() ? p : base / p).lexically_normal().string();
      auto [it, inserted] = index.emplace(key, uint32_t(images_.size()));
      if (inserted) {
        images_.push_back(key);
        as_written_.push_back(std::move(r.image));
      }
      row.image = it->second;
    }
    rows_.push_back(std::move(row));
  }
}

void CaptionsDataset::read_image(size_t i, std::vector<uint8_t>& bytes) const {
  const Row& r = rows_.at(i);
  if (r.bad) throw Error(r.reason);
  const std::string& path = images_[r.image];
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  int err = fd < 0 ? errno : read_all(fd, bytes);
  if (fd >= 0) ::close(fd);
  if (err) fail(name_, ":", r.line, ": image '", as_written_[r.image], "': ", std::strerror(err));
  if (bytes.empty()) fail(name_, ":", r.line, ": image '", as_written_[r.image], "': empty file (0 bytes)");
}

std::string CaptionsDataset::describe(size_t i) const {
  const Row& r = rows_.at(i);
  if (r.bad) return str(name_, ":", r.line);
  return str(name_, ":", r.line, " (", as_written_[r.image], ")");
}

std::string CaptionsDataset::bad_reason(size_t i) const { return rows_.at(i).reason; }

std::unique_ptr<CaptionsDataset> open_captions(const std::string& path, const CaptionsOptions& opts) {
  std::string file = path;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    fs::path d(path);
    if (fs::exists(d / "captions.jsonl", ec)) file = (d / "captions.jsonl").string();
    else if (fs::exists(d / "captions.csv", ec)) file = (d / "captions.csv").string();
    else fail(path, ": no captions.jsonl or captions.csv in this folder (pass a captions file, or tar shards "
              "like DIR/shard-{000000..000009}.tar)");
  }
  bool csv = ends_with(file, ".csv");
  if (!csv && !ends_with(file, ".jsonl") && !ends_with(file, ".json"))
    fail(file, ": unknown captions file type (expected .jsonl, .json or .csv)");
  std::string text = read_text_file(file);
  ParsedCaptions parsed = csv ? parse_csv(text, file, opts) : parse_jsonl(text, file, opts);
  if (parsed.rows.empty()) fail(file, ": no rows");
  if (parsed.rows.size() >= UINT32_MAX) fail(file, ": too many rows");
  std::string folder = fs::path(file).parent_path().string();
  return std::make_unique<CaptionsDataset>(std::move(parsed), file, folder);
}

std::unique_ptr<Dataset> open_dataset(const std::string& path, const CaptionsOptions& opts) {
  if (classify_source(path) == SourceKind::kShards) {
    ShardOptions so;
    so.caption_column = opts.caption_column;
    so.on_bad = opts.on_bad_row;
    return open_tar_dataset(path, so);
  }
  return open_captions(path, opts);
}

SourceKind classify_source(const std::string& path) {
  if (ends_with(path, ".parquet")) return SourceKind::kParquet;
  if (ends_with(path, ".tar") || ends_with(path, ".tar.gz") || ends_with(path, ".tgz") ||
      path.find_first_of("{*?[") != std::string::npos)
    return SourceKind::kShards;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return SourceKind::kCaptions;
  fs::path d(path);
  if (fs::exists(d / "captions.jsonl", ec) || fs::exists(d / "captions.csv", ec)) return SourceKind::kCaptions;
  bool tar = false, parquet = false;
  for (auto& e : fs::directory_iterator(d, ec)) {
    std::string n = e.path().filename().string();
    tar |= ends_with(n, ".tar");
    parquet |= ends_with(n, ".parquet");
  }
  if (tar) return SourceKind::kShards;
  if (parquet) return SourceKind::kParquet;
  return SourceKind::kCaptions;
}

}  // namespace bt::data
