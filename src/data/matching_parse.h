// The contest's matching task as a JSONL file: per line an image, its caption choices and the true one's label,
// e.g. {"image": "images/7.jpg", "caption_choices": ["...", "...", ...], "label": "C"}. Image paths are relative
// to the file's folder (as for captions files); `bridgetune synth` writes such a file (matching.jsonl).
//
// Contract:
//  - label: a letter A-Z (A = first choice) or a 0-based integer; it must name one of the choices.
//  - caption_choices: a non-empty array (at most kMaxChoices) of non-empty UTF-8 strings.
//  - A row is bad when its line is not a JSON object, a column is missing or of the wrong type, or the label is
//    outside its choices; on_bad_row = kError throws bt::Error("NAME:LINE: why") for the first, kSkip keeps it
//    flagged (bad == true) and counts it in `bad`.
//  - A line longer than max_line_bytes always throws (the file is not read past it).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "data/bad_rows.h"
#include "data/jsonl.h"

namespace bt::data {

struct MatchingOptions {
  std::string image_column = "image";
  std::string choices_column = "caption_choices";
  std::string label_column = "label";
  OnBad on_bad_row = OnBad::kError;
  // A longer line is an error naming FILE:LINE (checked while reading; see data/jsonl.h; --max_line_bytes).
  uint64_t max_line_bytes = kDefaultMaxLineBytes;
  static constexpr size_t kMaxChoices = 64;
};

struct MatchingItem {
  std::string image;  // as written in the file
  std::vector<std::string> choices;
  int label = -1;  // index into choices
  size_t line = 0;
  bool bad = false;
  std::string reason;
};

struct ParsedMatching {
  std::vector<MatchingItem> rows;
  BadRows bad;
};

ParsedMatching parse_matching_jsonl(std::string_view text, const std::string& name, const MatchingOptions& opts = {});

// A label given as text: "A".."Z" (or lower case) or a 0-based index "0".."999"; -1 and *why otherwise.
int parse_matching_label(std::string_view text, std::string* why);

// Reads and parses a matching JSONL file (errors name the file).
ParsedMatching read_matching_file(const std::string& path, const MatchingOptions& opts = {});

}  // namespace bt::data
