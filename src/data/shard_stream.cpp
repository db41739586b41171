// Streaming WebDataset tar reader (see shard_stream.h). libarchive pulls the shard in blocks; members are
// grouped into samples as they go by, so only one sample is held in memory at a time.
#include "data/shard_stream.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/error.h"
#include "common/terminal.h"
#include "common/file_gate.h"
#include "common/json.h"
#include "data/captions_parse.h"

namespace bt::data {

namespace {

// A fatal read error inside one shard; next() turns it into bt::Error or a counted skip.
struct ShardFatal {
  std::string msg;
};

enum Kind { kOther, kImage, kTxt, kJson };

// WebDataset's image extensions for every format media/decode.h reads (the decoder detects the format from the
// bytes; the extension only says which member is the image).
int kind_of(const std::string& ext) {
  for (const char* e : {"jpg", "jpeg", "png", "webp", "gif", "bmp", "tif", "tiff"})
    if (ext == e) return kImage;
  if (ext == "txt") return kTxt;
  if (ext == "json") return kJson;
  return kOther;
}

archive* new_reader() {
  archive* a = archive_read_new();
  if (!a) throw std::bad_alloc();
  archive_read_support_format_tar(a);
  archive_read_support_filter_gzip(a);
  archive_read_support_filter_zstd(a);
  return a;
}

}  // namespace


ShardReader::ShardReader(std::string name, const ShardOptions& opts) : name_(std::move(name)), opts_(opts) {}

ShardReader::~ShardReader() {
  if (a_) archive_read_free(a_);
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<ShardReader> ShardReader::open_file(const std::string& path, const ShardOptions& opts) {
  std::unique_ptr<ShardReader> r(new ShardReader(path, opts));
  try {  // the file gate: a FIFO would block an open, /dev/zero would be read forever
    r->fd_ = open_regular_file(path);
  } catch (const Error& e) {
    r->open_error_ = e.what();
    return r;
  }
  r->a_ = new_reader();
  if (archive_read_open_fd(r->a_, r->fd_, size_t(1) << 20) != ARCHIVE_OK) {
    const char* e = archive_error_string(r->a_);
    r->open_error_ = str(path, ": cannot open shard: ", e ? e : "unknown error");
  }
  return r;
}

std::unique_ptr<ShardReader> ShardReader::open_memory(const void* data, size_t size, const std::string& name,
                                                      const ShardOptions& opts) {
  std::unique_ptr<ShardReader> r(new ShardReader(name, opts));
  r->a_ = new_reader();
  if (archive_read_open_memory(r->a_, data, size) != ARCHIVE_OK) {
    const char* e = archive_error_string(r->a_);
    r->open_error_ = str(name, ": cannot open shard: ", e ? e : "unknown error");
  }
  return r;
}

long ShardReader::stream_read(archive* a, void* self, const void** buf) {
  auto* r = static_cast<ShardReader*>(self);
  try {
    *buf = r->block_.data();
    return long(r->stream_->read(r->block_.data(), r->block_.size()));
  } catch (const std::exception& e) {
    r->stream_error_ = e.what();
    archive_set_error(a, EIO, "%s", e.what());
    return -1;
  }
}

std::unique_ptr<ShardReader> ShardReader::open_stream(std::unique_ptr<ByteStream> stream, const ShardOptions& opts) {
  std::unique_ptr<ShardReader> r(new ShardReader(stream->location(), opts));
  r->stream_ = std::move(stream);
  r->block_.resize(size_t(1) << 20);
  r->a_ = new_reader();
  if (archive_read_open(r->a_, r.get(), nullptr, &ShardReader::stream_read, nullptr) != ARCHIVE_OK) {
    const char* e = archive_error_string(r->a_);
    r->open_error_ = !r->stream_error_.empty() ? r->stream_error_
                                               : str(r->name_, ": cannot open shard: ", e ? e : "unknown error");
  }
  return r;
}

std::unique_ptr<ShardReader> ShardReader::open_location(const std::string& loc, const ShardOptions& opts) {
  if (!is_streamed_location(loc)) return open_file(loc, opts);
  std::unique_ptr<ByteStream> s;
  try {
    s = open_byte_stream(loc, opts.stream);
  } catch (const Error& e) {  // reported by the first next(), honouring on_bad like any broken shard
    std::unique_ptr<ShardReader> r(new ShardReader(loc, opts));
    r->open_error_ = e.what();
    return r;
  }
  return open_stream(std::move(s), opts);
}

void ShardReader::drain_stream() {
  // libarchive stops at the end-of-archive blocks; reading on to the stream's end (a little padding) is what
  // reports a command's nonzero exit or a broken HTTP transfer. Past 1 MiB of trailing bytes, stop listening.
  if (!stream_) return;
  try {
    for (size_t total = 0, n; total < (size_t(1) << 20) && (n = stream_->read(block_.data(), block_.size())) > 0;)
      total += n;
  } catch (const std::exception& e) {
    stream_error_ = e.what();
    throw ShardFatal{stream_error_};
  }
}

void ShardReader::fatal(const std::string& member, const std::string& why) {
  // A failed stream names itself (URL or command) and why; libarchive's wrapping adds nothing.
  if (!stream_error_.empty())
    throw ShardFatal{member.empty() ? stream_error_ : str(stream_error_, " (in member '", clip_name(member), "')")};
  if (member.empty()) throw ShardFatal{str(name_, ": ", why)};
  throw ShardFatal{str(name_, ": member '", clip_name(member), "': ", why)};
}

bool ShardReader::read_header(Member& m) {
  if (!open_error_.empty()) throw ShardFatal{open_error_};
  archive_entry* e = nullptr;
  int r = archive_read_next_header(a_, &e);
  if (r == ARCHIVE_EOF && locate_image_) {
    int64_t pos = archive_read_header_position(a_);
    int64_t padded = (int64_t(cur_.image_size) + 511) / 512 * 512;
    if (pos < padded) throw ShardFatal{str(name_, ": cannot locate member '", clip_name(last_member_), "'")};
    cur_.image_offset = uint64_t(pos - padded);
    locate_image_ = false;
  }
  if (r == ARCHIVE_EOF) {
    drain_stream();
    return false;
  }
  // ARCHIVE_RETRY (a header whose checksum is wrong, say) leaves no entry to read: the shard is corrupt there, and
  // going on would only earn libarchive's "INTERNAL ERROR: Function 'archive_read_data_skip' invoked ...".
  if (r == ARCHIVE_RETRY && stream_error_.empty())
    fatal(group_members_ == 0 ? "" : last_member_, group_members_ == 0
              ? "a damaged tar header (its checksum or fields do not verify)"
              : "the tar header after it is damaged (its checksum or fields do not verify)");
  if (r < ARCHIVE_WARN) {
    const char* s = archive_error_string(a_);
    fatal(group_members_ == 0 ? "" : last_member_, s ? s : "corrupt tar archive");
  }
  if (opts_.index_only) {
    if (!checked_filter_ && archive_filter_code(a_, 0) != ARCHIVE_FILTER_NONE)
      throw ShardFatal{str(name_, ": random access needs an uncompressed .tar shard (stream compressed ones)")};
    checked_filter_ = true;
    // The previous member's data (padded to 512-byte blocks) ends where this header starts.
    if (locate_image_) {
      int64_t pos = archive_read_header_position(a_);
      int64_t padded = (int64_t(cur_.image_size) + 511) / 512 * 512;
      if (pos < padded) throw ShardFatal{str(name_, ": cannot locate member '", clip_name(last_member_), "'")};
      cur_.image_offset = uint64_t(pos - padded);
      locate_image_ = false;
    }
  }
  const char* p = archive_entry_pathname(e);
  m.name = p ? p : "";
  m.data.clear();
  m.error.clear();
  m.regular = archive_entry_filetype(e) == AE_IFREG;
  m.size = archive_entry_size_is_set(e) ? int64_t(archive_entry_size(e)) : -1;
  size_t slash = m.name.rfind('/');
  size_t dot = m.name.find('.', slash == std::string::npos ? 0 : slash + 1);
  m.key = m.name.substr(0, dot);
  m.ext = dot == std::string::npos ? "" : m.name.substr(dot + 1);
  for (char& c : m.ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  m.kind = m.regular ? kind_of(m.ext) : kOther;
  return true;
}

void ShardReader::read_data(Member& m, bool want_data) {
  if (m.kind == kOther || !want_data) {
    if (archive_read_data_skip(a_) < ARCHIVE_WARN) {
      const char* s = archive_error_string(a_);
      fatal(m.name, s ? s : "truncated member");
    }
    return;
  }
  // The limit holds in both modes: in index mode TarDataset::read_image later allocates the header's size. A
  // caption (txt, json) is held as text: it has the captions files' line limit too.
  const bool text = m.kind != kImage;
  const size_t limit = text ? std::min(opts_.max_member_bytes, opts_.max_caption_bytes) : opts_.max_member_bytes;
  const char* which = text && limit == opts_.max_caption_bytes ? " for a caption (--max_line_bytes)" : "";
  if (m.size > int64_t(limit)) {
    m.error = str(m.size, " bytes, more than the limit of ", limit, which);
    if (archive_read_data_skip(a_) < ARCHIVE_WARN) fatal(m.name, "truncated member");
    return;
  }
  if (opts_.index_only && m.kind == kImage) {
    // Keep a prefix so the index can be checked against the file.
    if (m.size <= 0) {
      m.error = "image member of unknown or zero size";
    } else {
      size_t want = size_t(std::min<int64_t>(m.size, 64)), got = 0;
      m.data.resize(want);
      while (got < want) {
        la_ssize_t n = archive_read_data(a_, m.data.data() + got, want - got);
        if (n < 0) {
          const char* s = archive_error_string(a_);
          fatal(m.name, s ? s : "read error");
        }
        if (n == 0) fatal(m.name, "truncated member");
        got += size_t(n);
      }
    }
    if (archive_read_data_skip(a_) < ARCHIVE_WARN) {
      const char* s = archive_error_string(a_);
      fatal(m.name, s ? s : "truncated member");
    }
    return;
  }
  // Grow with the data actually read, never with the header's claim.
  size_t got = 0;
  for (;;) {
    // First chunk: the header's size (+1 to see EOF without growing); then 64 KiB steps.
    size_t step = got == 0 && m.size >= 0 ? size_t(m.size) + 1 : size_t(64) << 10;
    size_t chunk = std::min<size_t>(std::max<size_t>(step, 1), limit + 1 - got);
    m.data.resize(got + chunk);
    la_ssize_t n = archive_read_data(a_, m.data.data() + got, chunk);
    if (n < 0) {
      const char* s = archive_error_string(a_);
      fatal(m.name, s ? s : "read error");
    }
    if (n == 0) break;
    got += size_t(n);
    if (got > limit) {
      m.data.clear();
      m.error = str("more than the limit of ", limit, " bytes", which);
      if (archive_read_data_skip(a_) < ARCHIVE_WARN) fatal(m.name, "truncated member");
      return;
    }
  }
  m.data.resize(got);
}

bool ShardReader::finish_group(TarSample& out) {
  std::string why;
  auto list = [&] {
    std::string s;
    for (size_t i = 0; i < members_.size(); ++i) s += (i ? ", " : "") + members_[i];
    return s + (group_members_ > members_.size() ? str(", ... (", group_members_, " members)") : "");
  };
  if (has_json_ && !has_txt_) {
    auto j = try_parse_json(json_);
    if (j.is_discarded() || !j.is_object()) why = "caption json is not a JSON object";
    else if (auto it = j.find(opts_.caption_column); it == j.end() || !it->is_string())
      why = str("caption json has no string '", opts_.caption_column, "'");
    else cur_.caption = it->get<std::string>();
  }
  if (why.empty() && !has_image_) why = str("no image (members: ", list(), ")");
  if (why.empty() && !has_txt_ && !has_json_) why = str("no caption (members: ", list(), ")");
  if (why.empty() && cur_.caption.empty()) why = "empty caption";
  if (why.empty() && !valid_utf8(cur_.caption)) why = "caption is not valid UTF-8";
  bool ok = why.empty() && !spoiled_;
  if (!why.empty() && !spoiled_) {
    std::string msg = str(name_, ": sample '", clip_name(key_), "': ", why);
    if (opts_.on_bad == OnBad::kError) throw Error(msg);
    bad_.add(msg);
  } else {
    out.key = name_ + ":" + key_;
    out.image.swap(cur_.image);
    out.image_ext = cur_.image_ext;
    out.caption.swap(cur_.caption);
    out.image_offset = cur_.image_offset;
    out.image_size = cur_.image_size;
  }
  key_.clear();
  members_.clear();
  group_members_ = 0;
  cur_.image.clear();
  cur_.caption.clear();
  json_.clear();
  has_image_ = has_txt_ = has_json_ = spoiled_ = false;
  cur_.image_offset = cur_.image_size = 0;
  return ok;
}

void ShardReader::add_to_group(Member& m) {
  key_ = m.key;
  // The names a message lists: the first few, clipped; one key with 10,000 long member names keeps 8 of them.
  if (members_.size() < kListedMembers) members_.push_back(clip_name(m.name, 100));
  last_member_ = clip_name(m.name);
  ++group_members_;
  if (!m.error.empty()) {
    // An unusable member spoils its sample: report it under the member's name.
    std::string msg = str(name_, ": member '", clip_name(m.name), "': ", m.error);
    if (opts_.on_bad == OnBad::kError) throw Error(msg);
    bad_.add(msg);
    spoiled_ = true;
  } else if (m.kind == kImage && !has_image_) {
    cur_.image.swap(m.data);
    cur_.image_ext = m.ext;
    has_image_ = true;
    if (opts_.index_only) {
      cur_.image_size = uint64_t(m.size);
      locate_image_ = true;
    }
  } else if (m.kind == kTxt && !has_txt_) {
    cur_.caption.assign(m.data.begin(), m.data.end());
    while (!cur_.caption.empty() && std::isspace(static_cast<unsigned char>(cur_.caption.back())))
      cur_.caption.pop_back();
    has_txt_ = true;
  } else if (m.kind == kJson && !has_json_) {
    json_.assign(m.data.begin(), m.data.end());
    has_json_ = true;
  }
}

bool ShardReader::next(TarSample& out) {
  while (!done_) {
    try {
      if (!pending_) {
        if (!read_header(m_)) {
          done_ = true;
          return group_members_ > 0 && finish_group(out);
        }
        // An endless run of members that make no sample (other extensions, folders, bad samples) ends the shard.
        if (++since_sample_ > opts_.max_members_without_sample)
          throw ShardFatal{str(name_, ": ", opts_.max_members_without_sample, " members in a row without a usable "
                               "sample (not a WebDataset shard, or a damaged one)")};
        if (!m_.regular) {
          read_data(m_, false);
          continue;
        }
        // A new key completes the previous sample: hand it out before touching this member's data, so a
        // truncated member cannot take the finished sample down with it.
        if (group_members_ > 0 && m_.key != key_) {
          pending_ = true;
          if (finish_group(out)) {
            since_sample_ = 1;  // this member starts the next sample
            return true;
          }
        }
      }
      pending_ = false;
      read_data(m_, true);
    } catch (const ShardFatal& f) {
      done_ = true;
      if (opts_.on_bad == OnBad::kError) throw Error(f.msg);
      bad_.add(f.msg + " (rest of the shard skipped)");
      return false;
    }
    add_to_group(m_);
  }
  return false;
}

size_t ShardReader::count_remaining() {
  size_t n = 0;
  bool image = false, caption = false;
  std::string key;
  bool any = false;
  Member m;
  try {
    while (read_header(m)) {
      if (m.regular && any && m.key != key) {
        n += image && caption;
        image = caption = false;
      }
      read_data(m, false);
      if (!m.regular) continue;
      any = true;
      key = m.key;
      int k = kind_of(m.ext);
      image |= k == kImage;
      caption |= k == kTxt || k == kJson;
    }
  } catch (const ShardFatal& f) {
    done_ = true;
    if (opts_.on_bad == OnBad::kError) throw Error(f.msg);
    bad_.add(f.msg + " (rest of the shard skipped)");
    return n;
  }
  done_ = true;
  return n + (image && caption);
}

ShardStream::ShardStream(std::vector<std::string> shards, const ShardOptions& opts)
    : shards_(std::move(shards)), opts_(opts) {}

ShardStream::~ShardStream() = default;

bool ShardStream::next(TarSample& out) {
  while (index_ < shards_.size()) {
    if (!reader_) {
      try {
        reader_ = ShardReader::open_location(shards_[index_], opts_);
      } catch (const Error& e) {
        if (opts_.on_bad == OnBad::kError) throw;
        bad_.add(e.what());
        ++index_;
        continue;
      }
    }
    if (reader_->next(out)) return true;
    bad_.merge(reader_->bad());
    reader_.reset();
    ++index_;
  }
  return false;
}

BadRows ShardStream::bad() const {
  BadRows b = bad_;
  if (reader_) b.merge(reader_->bad());
  return b;
}

std::vector<size_t> count_shard_samples(const std::vector<std::string>& shards, const ShardOptions& opts) {
  static std::mutex mu;
  static std::map<std::string, std::tuple<off_t, int64_t, size_t>> cache;
  std::vector<size_t> counts;
  for (const auto& s : shards) {
    struct stat st;
    if (::stat(s.c_str(), &st) != 0) fail(s, ": shard not found");
    int64_t mtime = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    {
      std::lock_guard lock(mu);
      auto it = cache.find(s);
      if (it != cache.end() && std::get<0>(it->second) == st.st_size && std::get<1>(it->second) == mtime) {
        counts.push_back(std::get<2>(it->second));
        continue;
      }
    }
    auto r = ShardReader::open_file(s, opts);
    size_t n = r->count_remaining();
    if (r->bad().count == 0) {
      std::lock_guard lock(mu);
      cache[s] = {st.st_size, mtime, n};
    }
    counts.push_back(n);
  }
  return counts;
}

}  // namespace bt::data
