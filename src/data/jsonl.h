// JSON Lines iteration shared by the JSONL readers (captions, matching): one JSON object per line, parsed one
// line at a time so a bad line is reported with its own number and cannot derail the lines after it.
//
// Contract: blank lines are skipped and a UTF-8 byte order mark at the start is ignored; for every other
// line, on_object(obj, line, where) gets the parsed object, or on_bad(line, reason) gets "NAME:LINE: why"
// when the line is not valid JSON or not an object. `where` is the "NAME:LINE: " prefix for the caller's own
// messages. clip() keeps text quoted from the input to one short line.
// A line longer than `max_line_bytes` is an error (line_too_long), never parsed: nlohmann needs several times a
// line's size, so one giant line would cost gigabytes (read_text_file_capped applies the same cap while reading).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/json.h"

namespace bt::data {

inline std::string clip(std::string s, size_t max = 120) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}

// Default cap on one line of a JSONL or CSV file (CaptionsOptions / MatchingOptions::max_line_bytes): real rows
// take a few KB; the cap bounds what one line can cost (nlohmann's DOM takes several times the line).
inline constexpr uint64_t kDefaultMaxLineBytes = uint64_t(1) << 20;

// The error for a line (or a CSV record) past the cap: names the file, the line, the cap and how to raise it.
[[noreturn]] inline void line_too_long(const std::string& name, size_t line_no, uint64_t cap) {
  fail(name, ":", line_no, ": line longer than the limit of ", cap,
       " bytes (rows take a few KB; raise the limit with --max_line_bytes if the line is real)");
}

template <class OnObject, class OnBadLine>
void for_each_jsonl_object(std::string_view text, const std::string& name, uint64_t max_line_bytes,
                           OnObject on_object, OnBadLine on_bad) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.size() > max_line_bytes) line_too_long(name, line_no, max_line_bytes);
    if (line.find_first_not_of(" \t\r\f\v") == std::string_view::npos) continue;
    const std::string where = str(name, ":", line_no, ": ");
    nlohmann::ordered_json obj;
    try {
      obj = parse_json_limited<nlohmann::ordered_json>(line);
    } catch (const JsonTooDeep& e) {
      on_bad(line_no, str(where, e.what()));
      continue;
    } catch (const nlohmann::json::exception& e) {
      std::string msg = e.what();
      if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
      if (msg.rfind("parse error at line 1, ", 0) == 0) msg = msg.substr(23);
      on_bad(line_no, str(where, "not valid JSON (", clip(msg), ")"));
      continue;
    }
    if (!obj.is_object()) {
      on_bad(line_no, str(where, "not a JSON object (got ", obj.type_name(), ")"));
      continue;
    }
    on_object(obj, line_no, where);
  }
}

}  // namespace bt::data
