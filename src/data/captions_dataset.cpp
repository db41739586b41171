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
#include "common/file_gate.h"
#include "data/jsonl.h"
#include "data/streamed_dataset.h"
#include "data/tar_dataset.h"

namespace fs = std::filesystem;

namespace bt::data {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(),
                                                 [](char a, char b) { return std::tolower(a) == b; });
}

// Through the file gate (common/file_gate.h): a FIFO cannot hang the open, symlinks must end at a regular file.
std::string read_path(const std::string& path, std::vector<uint8_t>& bytes, uint64_t cap) {
  return try_read_regular_file(path, bytes, cap);
}

}  // namespace

void read_file(const std::string& path, std::vector<uint8_t>& bytes, uint64_t max_bytes) {
  if (std::string why = read_path(path, bytes, max_bytes); !why.empty()) fail(path, ": ", why);
}

std::string read_text_file(const std::string& path) {
  std::vector<uint8_t> b;
  read_file(path, b);
  return std::string(b.begin(), b.end());
}

std::string read_text_file_capped(const std::string& path, uint64_t max_line_bytes) {
  // The file gate (common/file_gate.h): a FIFO or a device such as /dev/zero is refused, never read.
  const int fd = open_nonblocking(path);
  if (fd < 0) fail(path, ": ", std::strerror(errno));
  struct stat st {};
  std::string why = fstat(fd, &st) != 0 ? std::string(std::strerror(errno)) : not_regular(st);
  if (!why.empty()) {
    ::close(fd);
    fail(path, ": ", why);
  }
  const uint64_t size = uint64_t(st.st_size);
  std::string text;
  // Reserving touches no memory; the cap keeps a sparse 100 GB file from asking for it all at once.
  text.reserve(static_cast<size_t>(std::min<uint64_t>(size, uint64_t(1) << 30)));
  constexpr size_t kBlock = size_t(1) << 20;
  size_t line_no = 1;
  uint64_t line_len = 0;  // bytes of the current line read so far
  for (;;) {
    const size_t at = text.size();
    text.resize(at + kBlock);
    const ssize_t r = ::read(fd, text.data() + at, kBlock);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) {
      text.resize(at);
      continue;
    }
    if (r < 0) {
      const int err = errno;
      ::close(fd);
      fail(path, ": read failed (", std::strerror(err), ")");
    }
    text.resize(at + size_t(r));
    if (r == 0) break;
    // The cap is checked per block, so a giant line stops the read within one block of the cap.
    for (size_t i = at; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '\n' || c == '\r') {
        line_no += c == '\n';
        line_len = 0;
      } else if (++line_len > max_line_bytes) {
        ::close(fd);
        line_too_long(path, line_no, max_line_bytes);
      }
    }
  }
  ::close(fd);
  return text;
}

CaptionsDataset::CaptionsDataset(ParsedCaptions parsed, std::string name, std::string folder,
                                 uint64_t max_image_bytes)
    : bad_(std::move(parsed.bad)), name_(std::move(name)), max_image_bytes_(max_image_bytes) {
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
  if (std::string why = read_path(path, bytes, max_image_bytes_); !why.empty()) {
    // A relative path is resolved against the captions file's folder: say where it was looked for.
    if (as_written_[r.image] != path) why += " (looked for " + path + ")";
    fail(name_, ":", r.line, ": image '", as_written_[r.image], "': ", why);
  }
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
  std::string text = read_text_file_capped(file, opts.max_line_bytes);
  ParsedCaptions parsed = csv ? parse_csv(text, file, opts) : parse_jsonl(text, file, opts);
  if (parsed.rows.empty()) fail(file, ": no rows");
  if (parsed.rows.size() >= UINT32_MAX) fail(file, ": too many rows");
  std::string folder = fs::path(file).parent_path().string();
  return std::make_unique<CaptionsDataset>(std::move(parsed), file, folder, opts.max_image_bytes);
}

std::unique_ptr<Dataset> open_dataset(const std::string& path, const CaptionsOptions& opts) {
  if (classify_source(path) == SourceKind::kShards) {
    ShardOptions so;
    so.caption_column = opts.caption_column;
    so.on_bad = opts.on_bad_row;
    so.max_member_bytes = opts.max_image_bytes;
    so.max_caption_bytes = opts.max_line_bytes;
    if (is_streamed_location(path)) return StreamedDataset::open(expand_shard_pattern(path), so);
    return open_tar_dataset(path, so);
  }
  return open_captions(path, opts);
}

SourceKind classify_source(const std::string& path) {
  if (is_streamed_location(path)) return SourceKind::kShards;  // http(s)://, pipe: (webdataset's tar streams)
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
