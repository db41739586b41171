// Parsers for captions files held in memory: JSONL (one JSON object per line) and CSV (RFC 4180). They take
// the file's bytes plus the name to use in messages, so they can be tested and fuzzed without files.
//
// Contract:
//  - Every kept row has its line number (1-based, the line where the row starts) and either image+caption
//    (bad == false) or a reason "NAME:LINE: why" (bad == true).
//  - A row is bad when its line is not valid JSON / not an object, a selected column is missing, not a
//    string or empty, a CSV record has the wrong number of fields or broken quoting, or its text is not UTF-8.
//  - on_bad == kError: the first bad row throws bt::Error(reason). kSkip: bad rows are kept flagged, and
//    counted in `bad`. Structural problems (CSV header without the selected columns, an empty CSV, an
//    unterminated quote that eats the rest of the file) always throw.
//  - Blank lines (only whitespace) are ignored; a UTF-8 byte order mark at the start is ignored.
//  - A line (JSONL) or a record (CSV, where a quoted field may span lines) longer than max_line_bytes always
//    throws "NAME:LINE: line longer than the limit of N bytes (... --max_line_bytes ...)".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/bad_rows.h"
#include "data/jsonl.h"

namespace bt::data {

// Default cap on one image file's size: generous (real photos are a few MB) but bounded.
inline constexpr uint64_t kDefaultMaxImageBytes = uint64_t(64) << 20;

struct CaptionsOptions {
  std::string image_column = "image";
  std::string caption_column = "caption";
  OnBad on_bad_row = OnBad::kError;
  uint64_t max_image_bytes = kDefaultMaxImageBytes;  // larger image files are bad rows (--max_image_bytes)
  // A longer line (JSONL) or record (CSV) is an error naming FILE:LINE, checked while the file is read, before
  // the line is held whole (--max_line_bytes).
  uint64_t max_line_bytes = kDefaultMaxLineBytes;
};

struct CaptionRow {
  std::string image;  // as written in the file (not yet resolved against the file's folder)
  std::string caption;
  size_t line = 0;
  bool bad = false;
  std::string reason;  // set when bad
};

struct ParsedCaptions {
  std::vector<CaptionRow> rows;
  BadRows bad;
};

ParsedCaptions parse_jsonl(std::string_view text, const std::string& name, const CaptionsOptions& opts);
ParsedCaptions parse_csv(std::string_view text, const std::string& name, const CaptionsOptions& opts);

// True when `s` is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool valid_utf8(std::string_view s);

}  // namespace bt::data
