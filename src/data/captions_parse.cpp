// JSONL and CSV captions parsing (see captions_parse.h). JSON objects are parsed with nlohmann::json one
// line at a time, so a bad line is reported with its own number and cannot derail the lines after it.
#include "data/captions_parse.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "data/jsonl.h"

namespace bt::data {

OnBad parse_on_bad(const std::string& value, const std::string& flag) {
  if (value == "error") return OnBad::kError;
  if (value == "skip") return OnBad::kSkip;
  fail(flag, ": expected 'error' or 'skip', got '", value, "'");
}

bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07;
    else return false;
    if (n - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return false;
    i += len;
  }
  return true;
}

namespace {

std::string_view strip_bom(std::string_view t) {
  if (t.size() >= 3 && t.substr(0, 3) == "\xEF\xBB\xBF") t.remove_prefix(3);
  return t;
}

void add_row(ParsedCaptions& out, CaptionRow row, const CaptionsOptions& opts, const std::string& name) {
  // A NUL would silently cut the path short when it reaches open().
  if (!row.bad && row.image.find('\0') != std::string::npos) {
    row.bad = true;
    row.reason = str(name, ":", row.line, ": image path contains a NUL byte");
  }
  if (row.bad) {
    if (opts.on_bad_row == OnBad::kError) throw Error(row.reason);
    out.bad.add(row.reason);
    row.image.clear();
    row.caption.clear();
  }
  out.rows.push_back(std::move(row));
}

// Sets row.bad/reason unless `value` is a non-empty string; otherwise stores it in *dst.
template <class Json>
bool take_string(const Json& obj, const std::string& key, const std::string& where, CaptionRow& row, std::string* dst) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    std::string keys;
    size_t k = 0;
    for (auto kv = obj.begin(); kv != obj.end(); ++kv, ++k) {
      if (k == 20) {
        keys += ", ...";
        break;
      }
      keys += (k ? ", " : "") + clip(kv.key(), 40);
    }
    row.reason = str(where, "missing key '", key, "' (keys: ", keys, ")");
  } else if (!it->is_string()) {
    row.reason = str(where, "key '", key, "' is not a string (got ", it->type_name(), ")");
  } else if (it->template get_ref<const std::string&>().empty()) {
    row.reason = str(where, "empty '", key, "'");
  } else {
    *dst = it->template get<std::string>();
    return true;
  }
  row.bad = true;
  return false;
}

}  // namespace

ParsedCaptions parse_jsonl(std::string_view text, const std::string& name, const CaptionsOptions& opts) {
  ParsedCaptions out;
  auto on_object = [&](const nlohmann::ordered_json& obj, size_t line, const std::string& where) {
    CaptionRow row;
    row.line = line;
    if (take_string(obj, opts.image_column, where, row, &row.image))
      take_string(obj, opts.caption_column, where, row, &row.caption);
    add_row(out, std::move(row), opts, name);
  };
  auto on_bad = [&](size_t line, std::string reason) {
    CaptionRow row;
    row.line = line;
    row.bad = true;
    row.reason = std::move(reason);
    add_row(out, std::move(row), opts, name);
  };
  for_each_jsonl_object(text, name, opts.max_line_bytes, on_object, on_bad);
  return out;
}

namespace {

// RFC 4180 record reader. Fields may be quoted ("" is a quote), quoted fields may hold commas and newlines;
// records end at LF, CRLF or a lone CR.
class CsvReader {
 public:
  CsvReader(std::string_view t, const std::string& name, uint64_t max_record_bytes)
      : t_(t), name_(name), cap_(max_record_bytes) {}

  // Reads the next non-blank record. Returns false at end. A malformed record sets `error`.
  bool next(std::vector<std::string>& fields, size_t& line, std::string& error) {
    fields.clear();
    error.clear();
    while (pos_ < t_.size() && skip_blank_line()) {
    }
    if (pos_ >= t_.size()) return false;
    line = line_;
    start_ = pos_;
    std::string field;
    for (;;) {
      field.clear();
      if (pos_ < t_.size() && t_[pos_] == '"') {
        ++pos_;
        for (;;) {
          if (pos_ >= t_.size()) fail(name_, ":", line, ": unterminated quoted field");
          char c = t_[pos_];
          if (c == '"') {
            if (pos_ + 1 < t_.size() && t_[pos_ + 1] == '"') {
              field += '"';
              pos_ += 2;
              continue;
            }
            ++pos_;
            break;
          }
          if (c == '\n') ++line_;
          field += c;
          ++pos_;
          check_length(line);
        }
        if (pos_ < t_.size() && !is_end(t_[pos_])) {
          error = str(name_, ":", line, ": unexpected character after a closing quote (a quote inside a quoted "
                      "field must be doubled)");
          skip_rest_of_line();
          return true;
        }
      } else {
        while (pos_ < t_.size() && !is_end(t_[pos_])) {
          if (t_[pos_] == '"') {
            error = str(name_, ":", line, ": quote inside an unquoted field (quote the whole field)");
            skip_rest_of_line();
            return true;
          }
          field += t_[pos_++];
          check_length(line);
        }
      }
      fields.push_back(std::move(field));
      if (pos_ >= t_.size()) return true;
      char c = t_[pos_++];
      if (c == ',') continue;
      end_line(c);
      return true;
    }
  }

 private:
  static bool is_end(char c) { return c == ',' || c == '\n' || c == '\r'; }
  // A record (quoted fields may span lines) past the cap stops before its fields grow further.
  void check_length(size_t line) const {
    if (pos_ - start_ > cap_) line_too_long(name_, line, cap_);
  }
  void end_line(char c) {
    if (c == '\r' && pos_ < t_.size() && t_[pos_] == '\n') ++pos_;
    ++line_;
  }
  bool skip_blank_line() {
    size_t p = pos_;
    while (p < t_.size() && (t_[p] == ' ' || t_[p] == '\t')) ++p;
    if (p < t_.size() && t_[p] != '\n' && t_[p] != '\r') return false;
    pos_ = p;
    if (pos_ < t_.size()) end_line(t_[pos_++]);
    return true;
  }
  void skip_rest_of_line() {
    while (pos_ < t_.size() && t_[pos_] != '\n' && t_[pos_] != '\r') ++pos_;
    if (pos_ < t_.size()) end_line(t_[pos_++]);
  }

  std::string_view t_;
  const std::string& name_;
  uint64_t cap_;
  size_t pos_ = 0, start_ = 0;
  size_t line_ = 1;
};

}  // namespace

ParsedCaptions parse_csv(std::string_view text, const std::string& name, const CaptionsOptions& opts) {
  ParsedCaptions out;
  CsvReader reader(strip_bom(text), name, opts.max_line_bytes);
  std::vector<std::string> header, fields;
  size_t line = 0;
  std::string error;
  if (!reader.next(header, line, error)) fail(name, ": empty CSV file (expected a header row)");
  if (!error.empty()) throw Error(error + " (in the header row)");
  auto column = [&](const std::string& col) -> size_t {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == col) return i;
    // Column names are listed only when they look like column names: a header row that is really the first line
    // of some other file (a key, a password line) is never echoed, only counted.
    const bool names_only = std::all_of(header.begin(), header.end(), [](const std::string& h) {
      return !h.empty() && h.size() <= 40 && std::all_of(h.begin(), h.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '_' || c == ' ' || c == '.' || c == '-';
      });
    });
    if (!names_only) fail(name, ": no column '", col, "' (the header row has ", header.size(), " fields)");
    std::string cols;
    for (size_t i = 0; i < header.size() && i < 50; ++i) cols += (i ? ", " : "") + header[i];
    fail(name, ": no column '", col, "'; columns are: ", cols);
  };
  size_t ci = column(opts.image_column), cc = column(opts.caption_column);
  while (reader.next(fields, line, error)) {
    CaptionRow row;
    row.line = line;
    std::string where = str(name, ":", line, ": ");
    if (!error.empty()) {
      row.bad = true;
      row.reason = error;
    } else if (fields.size() != header.size()) {
      row.bad = true;
      row.reason = str(where, fields.size(), " fields, the header has ", header.size());
    } else if (fields[ci].empty() || fields[cc].empty()) {
      row.bad = true;
      row.reason = str(where, "empty '", fields[ci].empty() ? opts.image_column : opts.caption_column, "'");
    } else if (!valid_utf8(fields[ci]) || !valid_utf8(fields[cc])) {
      row.bad = true;
      row.reason = str(where, "not valid UTF-8");
    } else {
      row.image = std::move(fields[ci]);
      row.caption = std::move(fields[cc]);
    }
    add_row(out, std::move(row), opts, name);
  }
  return out;
}

}  // namespace bt::data
