#include "parquet/parquet_dataset.h"

#include <glob.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "common/error.h"

namespace bt::parquet {

struct ParquetDataset::SparePool {
  static constexpr size_t kMax = 4;
  SparePool() { values.reserve(kMax); }  // so returning a page never allocates (it runs in a deleter)
  std::mutex mu;
  std::vector<ColumnValues> values;
};

struct ParquetDataset::CacheEntry {
  std::mutex mu;  // held while decoding, so concurrent readers of the group wait for one decode
  std::shared_ptr<const ColumnValues> values;
  size_t bytes = 0;
  std::list<Key>::iterator lru_pos;
};

namespace {

// A fast 64-bit hash (multiply-xorshift over 8-byte words); collisions only merge two images' cache keys.
uint64_t hash_bytes(std::string_view s) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  std::memcpy(&w, s.data() + i, s.size() - i);
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 29;
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 32);
}

std::string hash_key(std::string_view bytes) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "#%016llx-%zu", static_cast<unsigned long long>(hash_bytes(bytes)), bytes.size());
  return buf;
}

bool has_glob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

}  // namespace

std::vector<std::string> ParquetDataset::expand_files(const std::vector<std::string>& patterns) {
  std::vector<std::string> out;
  for (const std::string& p : patterns) {
    std::error_code ec;
    if (!has_glob(p) && std::filesystem::is_directory(p, ec)) {
      // A folder (as `datasets` downloads them): its *.parquet files, sorted.
      std::vector<std::string> found;
      for (const auto& e : std::filesystem::directory_iterator(p, ec))
        if (e.path().extension() == ".parquet") found.push_back(e.path().string());
      if (found.empty()) fail("--train_file '", p, "': folder holds no .parquet files");
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
      continue;
    }
    if (!has_glob(p)) {
      out.push_back(p);
      continue;
    }
    glob_t g{};
    int rc = ::glob(p.c_str(), 0, nullptr, &g);
    std::vector<std::string> found;
    if (rc == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) found.emplace_back(g.gl_pathv[i]);
    globfree(&g);
    if (found.empty()) fail("--train_file '", p, "' matches no files");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  if (out.empty()) fail("--train_file: no parquet files given");
  return out;
}

ParquetDataset::ParquetDataset(const std::vector<std::string>& files, ParquetDatasetOptions opts)
    : opts_(std::move(opts)), spare_(std::make_shared<SparePool>()) {
  std::vector<std::shared_ptr<const ByteSource>> sources;
  for (const std::string& f : expand_files(files)) sources.push_back(open_file_source(f));
  open(std::move(sources));
}

ParquetDataset::ParquetDataset(std::vector<std::shared_ptr<const ByteSource>> sources, ParquetDatasetOptions opts)
    : opts_(std::move(opts)), spare_(std::make_shared<SparePool>()) {
  open(std::move(sources));
}

ParquetDataset::~ParquetDataset() = default;

void ParquetDataset::open(std::vector<std::shared_ptr<const ByteSource>> sources) {
  for (auto& s : sources) {
    FileInfo fi;
    fi.file = std::make_unique<ParquetFile>(std::move(s));
    files_.push_back(std::move(fi));
  }
  for (size_t f = 0; f < files_.size(); ++f) load_file(f);
  pages_.resize(groups_.size());
}

namespace {

// The leaf named `column`, else the only leaf below it (a list's element), else -1.
int find_leaf_under(const ParquetFile& pf, const std::string& column) {
  if (int exact = pf.find_column(column); exact >= 0) return exact;
  int found = -1;
  const auto& leaves = pf.schema().leaves;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (leaves[i].name.rfind(column + ".", 0) != 0) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(i);
  }
  return found;
}

// Appends each row of `v` as its values in text (see ParquetDatasetOptions::extra_columns).
void append_as_text(const ColumnValues& v, std::vector<std::vector<std::string>>& rows) {
  auto text = [&](size_t e) {
    return v.type == Type::ByteArray ? std::string(v.bytes(e)) : std::to_string(v.ints[e]);
  };
  for (size_t r = 0; r < v.num_rows; ++r) {
    std::vector<std::string>& row = rows.emplace_back();
    if (v.list_begin.empty()) {
      if (v.present[r]) row.push_back(text(r));
      continue;
    }
    for (uint64_t e = v.list_begin[r]; e < v.list_begin[r + 1]; ++e)
      if (v.present[e]) row.push_back(text(e));
  }
}

}  // namespace

void ParquetDataset::load_file(size_t f) {
  FileInfo& fi = files_[f];
  const ParquetFile& pf = *fi.file;
  file_begin_.push_back(captions_.size());
  const std::string& img = opts_.image_column;
  auto missing = [&](const std::string& col, const char* what) {
    fail(pf.name(), ": column '", col, "' ", what, "; columns are: ", pf.describe_columns());
  };
  int plain = pf.find_column(img);
  if (plain >= 0) {
    fi.bytes_leaf = plain;
  } else {
    fi.bytes_leaf = pf.find_column(img + ".bytes");
    fi.path_leaf = pf.find_column(img + ".path");
  }
  if (fi.bytes_leaf < 0) missing(img, "not found (expected a binary column or a struct {bytes, path})");
  if (pf.schema().leaves[fi.bytes_leaf].type != Type::ByteArray) missing(img, "is not binary");
  if (fi.path_leaf >= 0 && pf.schema().leaves[fi.path_leaf].type != Type::ByteArray) fi.path_leaf = -1;
  int cap = -1;
  if (!opts_.caption_column.empty()) {
    cap = pf.find_column(opts_.caption_column);
    if (cap < 0) missing(opts_.caption_column, "not found");
    if (pf.schema().leaves[cap].type != Type::ByteArray) missing(opts_.caption_column, "is not a string column");
  }
  std::vector<int> extra_leaves;
  for (const std::string& col : opts_.extra_columns) {
    extra_leaves.push_back(find_leaf_under(pf, col));
    if (extra_leaves.back() < 0) missing(col, "not found (or holds more than one field)");
  }
  extras_.resize(opts_.extra_columns.size());
  // The text columns kept for every row (captions, extras, paths) share one budget per file, so that tiny chunks
  // each within their own value_budget cannot add up (the image column is decoded page by page, not kept).
  uint64_t kept_left = value_budget(static_cast<size_t>(std::min<uint64_t>(pf.file_size(), SIZE_MAX)));
  auto read_kept = [&](size_t g, size_t leaf) {
    ColumnValues v = pf.read_column(g, leaf, kept_left);
    kept_left -= std::min<uint64_t>(kept_left, v.data.size());
    return v;
  };

  for (size_t g = 0; g < pf.num_row_groups(); ++g) {
    const size_t n = static_cast<size_t>(pf.row_group_rows(g));
    if (n == 0) continue;
    const size_t begin = captions_.size();
    groups_.push_back({f, g, begin});
    const auto& cols = pf.metadata().row_groups[g].columns;
    const size_t leaf = static_cast<size_t>(fi.bytes_leaf);
    const int64_t image_bytes = leaf < cols.size() ? cols[leaf].meta.total_uncompressed_size : 0;
    spans_.push_back({begin, begin + n, static_cast<uint64_t>(std::max<int64_t>(image_bytes, 0))});
    if (cap >= 0) {
      ColumnValues caps = read_kept(g, static_cast<size_t>(cap));
      for (size_t r = 0; r < n; ++r) captions_.emplace_back(caps.bytes(r));
    } else {
      captions_.resize(captions_.size() + n);
    }
    for (size_t k = 0; k < extra_leaves.size(); ++k)
      append_as_text(read_kept(g, static_cast<size_t>(extra_leaves[k])), extras_[k]);
    ColumnValues paths;
    if (fi.path_leaf >= 0) paths = read_kept(g, static_cast<size_t>(fi.path_leaf));
    bool need_bytes = false;
    for (size_t r = 0; r < n; ++r) {
      std::string_view p = fi.path_leaf >= 0 ? paths.bytes(r) : std::string_view();
      keys_.emplace_back(p);
      need_bytes |= p.empty();
    }
    if (!need_bytes) continue;
    if (!opts_.hash_images_without_path) {
      for (size_t r = 0; r < n; ++r)
        if (keys_[begin + r].empty()) keys_[begin + r] = pf.name() + ":" + std::to_string(begin + r);
      continue;
    }
    // Streams the group's image bytes once; memory is bounded by one row group.
    ColumnValues imgs = pf.read_column(g, static_cast<size_t>(fi.bytes_leaf));
    for (size_t r = 0; r < n; ++r)
      if (keys_[begin + r].empty()) keys_[begin + r] = hash_key(imgs.bytes(r));
  }
}

std::vector<size_t> ParquetDataset::row_group_ends() const {
  std::vector<size_t> ends;
  ends.reserve(spans_.size());
  for (const Span& s : spans_) ends.push_back(s.end);
  return ends;
}

size_t ParquetDataset::window_groups_fitting_cache(size_t k) const {
  std::vector<uint64_t> sizes;
  for (const Span& s : spans_) sizes.push_back(s.image_bytes);
  std::sort(sizes.rbegin(), sizes.rend());  // the worst case: the k largest groups together
  const uint64_t budget = (static_cast<uint64_t>(opts_.cache_mb) << 20) / 2;
  size_t fit = 0;
  uint64_t sum = 0;
  while (fit < std::min(k, sizes.size()) && sum + sizes[fit] <= budget) sum += sizes[fit++];
  return std::max<size_t>(fit, 1);
}

size_t ParquetDataset::prepare_locality_order(int requested, std::vector<size_t>& row_group_ends) {
  row_group_ends.clear();
  if (requested == 0) return 0;
  const size_t k = window_groups_fitting_cache(requested < 0 ? kDefaultWindowGroups : static_cast<size_t>(requested));
  row_group_ends = this->row_group_ends();
  set_cache_mb(std::min(cache_mb(), cache_mb_for_window(k)));
  return k;
}

size_t ParquetDataset::cache_mb_for_window(size_t k) const {
  std::vector<uint64_t> sizes;
  for (const Span& s : spans_) sizes.push_back(s.image_bytes);
  std::sort(sizes.rbegin(), sizes.rend());
  uint64_t sum = 0;
  for (size_t i = 0; i < std::min(k, sizes.size()); ++i) sum += sizes[i];
  return static_cast<size_t>((sum + sum / 4 + (uint64_t{1} << 20) - 1) >> 20);
}

size_t ParquetDataset::group_of(size_t row) const {
  auto it = std::upper_bound(groups_.begin(), groups_.end(), row,
                             [](size_t r, const Group& g) { return r < g.begin; });
  return static_cast<size_t>(it - groups_.begin()) - 1;
}

std::shared_ptr<const ParquetDataset::Pages> ParquetDataset::pages_of(size_t gi) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pages_[gi]) return pages_[gi];
  }
  const Group& g = groups_[gi];
  const FileInfo& fi = files_[g.file];
  auto pages = std::make_shared<const Pages>(fi.file->page_locations(g.group, static_cast<size_t>(fi.bytes_leaf)));
  std::lock_guard<std::mutex> lock(mu_);
  if (!pages_[gi]) pages_[gi] = pages;
  return pages_[gi];
}

std::shared_ptr<const ColumnValues> ParquetDataset::page_of(size_t gi, size_t r, size_t* first_row) const {
  std::shared_ptr<const Pages> pages = pages_of(gi);
  auto it = std::upper_bound(pages->begin(), pages->end(), r,
                             [](size_t row, const ParquetFile::PageLocation& l) { return row < l.first_row; });
  const size_t p = static_cast<size_t>(it - pages->begin());
  const Group& g = groups_[gi];
  const FileInfo& fi = files_[g.file];
  if (p == 0 || (*pages)[p - 1].dictionary || r - (*pages)[p - 1].first_row >= (*pages)[p - 1].num_rows)
    fail(fi.file->name(), ": row group ", g.group, ": no page holds row ", r);
  const Key key{gi, p - 1};
  *first_row = (*pages)[p - 1].first_row;

  std::shared_ptr<CacheEntry> e;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto cit = cache_.find(key);
    if (cit != cache_.end()) {
      e = cit->second;
      lru_.splice(lru_.begin(), lru_, e->lru_pos);
    } else {
      e = std::make_shared<CacheEntry>();
      lru_.push_front(key);
      e->lru_pos = lru_.begin();
      cache_.emplace(key, e);
    }
  }
  std::lock_guard<std::mutex> decode_lock(e->mu);
  if (e->values) return e->values;
  ColumnValues reuse;
  {
    std::lock_guard<std::mutex> lock(spare_->mu);
    if (!spare_->values.empty()) {
      reuse = std::move(spare_->values.back());
      spare_->values.pop_back();
    }
  }
  // When the last holder (cache or reader) drops the page, its buffers go back to the pool for the next
  // decode; the shared_ptr's release ordering makes that safe without looking at use counts.
  auto values_owned = std::make_unique<ColumnValues>(
      fi.file->read_pages(g.group, static_cast<size_t>(fi.bytes_leaf), *pages, p - 1, p - 1, std::move(reuse)));
  std::shared_ptr<const ColumnValues> values(values_owned.release(), [pool = spare_](const ColumnValues* cv) {
    std::unique_ptr<ColumnValues> own(const_cast<ColumnValues*>(cv));  // allocated non-const above
    std::lock_guard<std::mutex> lock(pool->mu);
    if (pool->values.size() < SparePool::kMax) pool->values.push_back(std::move(*own));  // capacity reserved
  });
  std::lock_guard<std::mutex> lock(mu_);
  e->values = values;
  e->bytes = values->memory_bytes();
  auto cit = cache_.find(key);
  if (cit != cache_.end() && cit->second == e) {
    cached_bytes_ += e->bytes;
    // Evict least recently used pages beyond the budget, never the one just decoded.
    const size_t budget = opts_.cache_mb << 20;
    while (cached_bytes_ > budget && lru_.size() > 1 && lru_.back() != key) {
      auto vit = cache_.find(lru_.back());
      cached_bytes_ -= vit->second->bytes;
      cache_.erase(vit);
      lru_.pop_back();
    }
  }
  return values;
}

void ParquetDataset::read_image(size_t i, std::vector<uint8_t>& bytes) const {
  if (i >= size()) fail("parquet dataset: row ", i, " out of range (", size(), " rows)");
  const size_t gi = group_of(i);
  size_t first = 0;
  std::shared_ptr<const ColumnValues> v = page_of(gi, i - groups_[gi].begin, &first);
  const size_t r = i - groups_[gi].begin - first;
  if (r >= v->num_rows) fail(describe(i), ": page decoded to fewer rows than its header says");
  if (!v->present[r]) fail(describe(i), ": image is null");
  std::string_view b = v->bytes(r);
  bytes.assign(b.begin(), b.end());
}

std::string ParquetDataset::describe(size_t i) const {
  if (i >= size()) return str("parquet row ", i, " (out of range)");
  const size_t gi = group_of(i);
  const Group& g = groups_[gi];
  return str(files_[g.file].file->name(), ": row ", i - file_begin_[g.file], " (row group ", g.group, ", image '",
             keys_[i], "')");
}

}  // namespace bt::parquet
