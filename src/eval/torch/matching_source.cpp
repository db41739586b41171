// The matching task's data (see matching_source.h): shape detection and the JSONL / parquet readers.
#include "eval/torch/matching_source.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "common/error.h"
#include "common/file_gate.h"
#include "common/json.h"
#include "data/captions_dataset.h"
#include "data/matching_parse.h"
#include "parquet/parquet_dataset.h"
#include "parquet/parquet_file.h"
#include "source/source.h"

namespace fs = std::filesystem;

namespace bt::eval {

namespace {

// The first line of a text file (at most 1 MiB of it is read).
std::string first_line(const std::string& path) {
  const int fd = open_regular_file(path);
  std::string text(1 << 20, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t r = ::read(fd, text.data() + got, text.size() - got);
    if (r <= 0) break;
    got += size_t(r);
    if (text.find('\n') < got) break;
  }
  ::close(fd);
  text.resize(got);
  return text.substr(0, text.find('\n'));
}

bool has_columns(const std::vector<std::string>& names, const MatchingSourceOptions& o) {
  auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  return has(o.image_column) && has(o.choices_column) && has(o.label_column);
}

OpenedMatching open_jsonl(const std::string& file, const MatchingSourceOptions& o) {
  data::MatchingOptions mo;
  mo.image_column = o.image_column;
  mo.choices_column = o.choices_column;
  mo.label_column = o.label_column;
  mo.on_bad_row = o.on_bad;
  mo.max_line_bytes = o.max_line_bytes;
  data::ParsedMatching parsed = data::read_matching_file(file, mo);
  if (o.max_rows > 0 && parsed.rows.size() > size_t(o.max_rows)) parsed.rows.resize(size_t(o.max_rows));
  OpenedMatching out;
  std::vector<size_t> items;
  out.set = matching_set_of(parsed, file, fs::path(file).parent_path().string(), &items);
  for (size_t i : items) out.where.push_back({{"line", parsed.rows[i].line}, {"image", parsed.rows[i].image}});
  out.bad = parsed.bad.count;
  return out;
}

// HF parquet (the contest's matching split): the image column, caption_choices list<string>, label text.
OpenedMatching open_parquet(const std::string& path, const MatchingSourceOptions& o) {
  source::SourceOptions so;
  so.image_column = o.image_column;
  so.caption_column = "";
  so.parquet_extra_columns = {o.choices_column, o.label_column};
  so.locality_order = false;
  so.flag = o.flag;
  auto ds = std::dynamic_pointer_cast<const parquet::ParquetDataset>(source::open_source(path, so).dataset);
  if (!ds) fail(o.flag, " ", path, ": not a parquet dataset");
  OpenedMatching out;
  out.set.images = ds;
  size_t n = ds->size();
  if (o.max_rows > 0) n = std::min(n, size_t(o.max_rows));
  for (size_t i = 0; i < n; ++i) {
    const std::vector<std::string>& choices = ds->extra(i, 0);
    const std::vector<std::string>& label = ds->extra(i, 1);
    std::string why;
    int k = label.size() == 1 ? data::parse_matching_label(label[0], &why) : -1;
    if (label.size() != 1) why = "no label";
    else if (k >= 0 && size_t(k) >= choices.size()) why = str("label ", k, " is outside its ", choices.size(), " choices");
    if (choices.empty()) why = str("'", o.choices_column, "' is an empty list");
    if (!why.empty()) {
      if (o.on_bad == data::OnBad::kError) fail(ds->describe(i), ": ", why);
      ++out.bad;
      continue;
    }
    out.set.rows.push_back({i, choices, k});
    out.where.push_back({{"row", i}});
  }
  return out;
}

}  // namespace

MatchingSourceOptions matching_source_options(const source::ReadOptions& read, int64_t max_rows, const std::string& flag) {
  MatchingSourceOptions m;
  m.image_column = read.image_column;
  m.on_bad = read.on_bad;
  m.max_rows = max_rows;
  m.max_line_bytes = read.max_line_bytes;
  m.flag = flag;
  return m;
}

std::string matching_data_of(const std::string& path, const MatchingSourceOptions& o) {
  std::error_code ec;
  switch (data::classify_source(path)) {
    case data::SourceKind::kShards:
      return "";
    case data::SourceKind::kParquet: {
      const std::vector<std::string> files = parquet::ParquetDataset::expand_files({path});
      if (files.empty()) return "";
      return has_columns(parquet::ParquetFile::open(files.front()).schema().top, o) ? path : "";
    }
    case data::SourceKind::kCaptions:
      break;
  }
  if (fs::is_directory(path, ec)) {
    const fs::path m = fs::path(path) / "matching.jsonl";
    return fs::is_regular_file(m, ec) ? m.string() : "";
  }
  if (fs::path(path).extension() != ".jsonl") return "";
  const nlohmann::json row = try_parse_json(first_line(path));
  if (!row.is_object()) return "";
  std::vector<std::string> keys;
  for (const auto& [k, v] : row.items()) keys.push_back(k);
  return has_columns(keys, o) ? path : "";
}

OpenedMatching open_matching(const std::string& path, const MatchingSourceOptions& o) {
  const std::string data = matching_data_of(path, o);
  const std::string what = data.empty() ? path : data;
  // A JSONL file or parquet without the shape goes on to its reader, which names the row or column at fault; any
  // other data (a captions CSV, a folder without matching.jsonl, tar shards) has no questions to read: one line.
  std::error_code ec;
  const bool jsonl = fs::path(path).extension() == ".jsonl" && !fs::is_directory(path, ec);
  if (data.empty() && !jsonl && data::classify_source(path) != data::SourceKind::kParquet)
    fail(o.flag, " ", path, ": no matching questions in it (the matching task reads a JSONL file or HF parquet with ",
         o.image_column, ", ", o.choices_column, " and ", o.label_column,
         " columns, or a folder holding matching.jsonl); image-caption pairs are scored with --task retrieval");
  return data::classify_source(what) == data::SourceKind::kParquet ? open_parquet(what, o) : open_jsonl(what, o);
}

}  // namespace bt::eval
