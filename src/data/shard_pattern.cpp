// Shard name patterns: brace expansion ({a,b}, {000..123}) as WebDataset/braceexpand do, then globs.
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "common/error.h"
#include "data/shard_stream.h"

namespace bt::data {

namespace {

constexpr size_t kMaxNames = 1000000;

bool parse_int(std::string_view s, long long& v) {
  if (s.empty() || s.size() > 18) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  v = 0;
  for (; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  if (s[0] == '-') v = -v;
  return true;
}

// Alternatives of a brace body, split at top-level commas; a single-element result means "not a list".
std::vector<std::string> split_top(std::string_view body) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '{') ++depth;
    else if (body[i] == '}') --depth;
    else if (body[i] == ',' && depth == 0) {
      parts.emplace_back(body.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.emplace_back(body.substr(start));
  return parts;
}

void expand(const std::string& pattern, const std::string& whole, std::vector<std::string>& out) {
  // Find the first '{' that has a matching '}'.
  size_t open = std::string::npos, close = std::string::npos;
  for (size_t i = 0; i < pattern.size() && close == std::string::npos; ++i) {
    if (pattern[i] != '{') continue;
    int depth = 0;
    for (size_t j = i; j < pattern.size(); ++j) {
      if (pattern[j] == '{') ++depth;
      else if (pattern[j] == '}' && --depth == 0) {
        open = i;
        close = j;
        break;
      }
    }
  }
  if (close == std::string::npos) {
    if (out.size() >= kMaxNames) fail(whole, ": pattern expands to more than ", kMaxNames, " names");
    out.push_back(pattern);
    return;
  }
  std::string pre = pattern.substr(0, open), post = pattern.substr(close + 1);
  std::string_view body(pattern.data() + open + 1, close - open - 1);
  std::vector<std::string> alts = split_top(body);
  if (alts.size() == 1) {
    size_t dots = body.find("..");
    long long a, b;
    if (dots == std::string_view::npos || !parse_int(body.substr(0, dots), a) || !parse_int(body.substr(dots + 2), b)) {
      // Not a list nor a range: the braces are literal; expand what follows them.
      // (Pushed as is: re-expanding them would find the same braces again.)
      std::vector<std::string> inner, rest;
      expand(std::string(body), whole, inner);
      expand(post, whole, rest);
      for (auto& in : inner)
        for (auto& r : rest) {
          if (out.size() >= kMaxNames) fail(whole, ": pattern expands to more than ", kMaxNames, " names");
          out.push_back(pre + "{" + in + "}" + r);
        }
      return;
    }
    if ((b >= a ? b - a : a - b) >= static_cast<long long>(kMaxNames))
      fail(whole, ": pattern expands to more than ", kMaxNames, " names");
    std::string_view first = body.substr(0, dots);
    size_t width = (first.size() > 1 && first[0] == '0') ? first.size() : 0;
    alts.clear();
    for (long long v = a;; v += (b >= a ? 1 : -1)) {
      std::string s = std::to_string(v < 0 ? -v : v);
      if (s.size() < width) s.insert(0, width - s.size(), '0');
      alts.push_back((v < 0 ? "-" : "") + s);
      if (v == b) break;
    }
  }
  for (const auto& alt : alts) expand(pre + alt + post, whole, out);
}

bool has_glob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

bool is_shard_name(const std::string& n) {
  auto ends = [&](std::string_view suf) { return n.size() >= suf.size() && n.compare(n.size() - suf.size(), suf.size(), suf) == 0; };
  return ends(".tar") || ends(".tar.gz") || ends(".tgz");
}

// A name found on this machine's disk (a glob match, a stat()ed brace expansion) is a file: one that happens to
// be called "pipe:..." or "http:..." must be read as that file, never run or fetched (data/user_command.h).
std::string as_path(std::string name) { return is_streamed_location(name) ? "./" + name : name; }

}  // namespace

std::vector<std::string> expand_braces(const std::string& pattern) {
  std::vector<std::string> out;
  expand(pattern, pattern, out);
  return out;
}

std::vector<std::string> expand_shard_pattern(const std::string& pattern) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  // URLs and commands are not on this machine's disk: brace expansion only (as webdataset does).
  if (is_streamed_location(pattern)) return expand_braces(pattern);
  std::error_code ec;
  if (fs::is_directory(pattern, ec)) {
    for (auto& e : fs::directory_iterator(pattern, ec))
      if (e.is_regular_file() && is_shard_name(e.path().filename().string())) out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    if (out.empty()) fail(pattern, ": no .tar shards in this folder");
    return out;
  }
  for (const auto& name : expand_braces(pattern)) {
    if (has_glob(name)) {
      glob_t g{};
      int rc = ::glob(name.c_str(), 0, nullptr, &g);
      if (rc == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(as_path(g.gl_pathv[i]));
      globfree(&g);
      if (rc != 0) fail(name, ": no files match this pattern");
    } else {
      struct stat st;
      if (::stat(name.c_str(), &st) != 0) fail(name, ": shard not found (from the pattern '", pattern, "')");
      out.push_back(as_path(name));
    }
  }
  return out;
}

}  // namespace bt::data
