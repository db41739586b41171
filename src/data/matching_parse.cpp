// Matching JSONL parsing (see matching_parse.h).
#include "data/matching_parse.h"

#include "data/captions_dataset.h"
#include "data/captions_parse.h"
#include "data/jsonl.h"

namespace bt::data {

int parse_matching_label(std::string_view s, std::string* why) {
  if (s.size() == 1 && s[0] >= 'A' && s[0] <= 'Z') return s[0] - 'A';
  if (s.size() == 1 && s[0] >= 'a' && s[0] <= 'z') return s[0] - 'a';
  if (!s.empty() && s.size() <= 3 && s.find_first_not_of("0123456789") == std::string_view::npos) return std::stoi(std::string(s));
  *why = str("label '", clip(std::string(s), 20), "' is not a letter A-Z or an index");
  return -1;
}

namespace {

// The label as a choice index, or "" + reason in *why.
int parse_label(const nlohmann::ordered_json& v, std::string* why) {
  if (v.is_number_integer()) {
    const long long k = v.get<long long>();
    if (k >= 0 && k < 1000) return int(k);
    *why = str("label ", k, " is not a 0-based choice index");
    return -1;
  }
  if (v.is_string()) return parse_matching_label(v.get_ref<const std::string&>(), why);
  *why = str("label is a ", v.type_name(), ", not a letter or an index");
  return -1;
}

// Fills item from obj, or returns the reason it is bad.
std::string parse_item(const nlohmann::ordered_json& obj, const MatchingOptions& o, MatchingItem& item) {
  auto image = obj.find(o.image_column);
  if (image == obj.end()) return str("missing key '", o.image_column, "'");
  if (!image->is_string() || image->get_ref<const std::string&>().empty())
    return str("'", o.image_column, "' is not a non-empty string");
  item.image = image->get<std::string>();
  if (item.image.find('\0') != std::string::npos) return "image path contains a NUL byte";
  auto choices = obj.find(o.choices_column);
  if (choices == obj.end()) return str("missing key '", o.choices_column, "'");
  if (!choices->is_array()) return str("'", o.choices_column, "' is a ", choices->type_name(), ", not a list");
  if (choices->empty()) return str("'", o.choices_column, "' is an empty list");
  if (choices->size() > MatchingOptions::kMaxChoices)
    return str("'", o.choices_column, "' has ", choices->size(), " choices (at most ", MatchingOptions::kMaxChoices, ")");
  for (const auto& c : *choices) {
    if (!c.is_string() || c.get_ref<const std::string&>().empty())
      return str("'", o.choices_column, "' holds a ", c.is_string() ? "empty string" : c.type_name(),
                 " (choices are non-empty strings)");
    if (!valid_utf8(c.get_ref<const std::string&>())) return str("a choice is not valid UTF-8");
    item.choices.push_back(c.get<std::string>());
  }
  auto label = obj.find(o.label_column);
  if (label == obj.end()) return str("missing key '", o.label_column, "'");
  std::string why;
  item.label = parse_label(*label, &why);
  if (item.label < 0) return why;
  if (size_t(item.label) >= item.choices.size())
    return str("label ", item.label, " is outside its ", item.choices.size(), " choices");
  return "";
}

}  // namespace

ParsedMatching parse_matching_jsonl(std::string_view text, const std::string& name, const MatchingOptions& opts) {
  ParsedMatching out;
  auto add = [&](MatchingItem item) {
    if (item.bad) {
      if (opts.on_bad_row == OnBad::kError) throw Error(item.reason);
      out.bad.add(item.reason);
      item.choices.clear();
      item.image.clear();
    }
    out.rows.push_back(std::move(item));
  };
  auto on_object = [&](const nlohmann::ordered_json& obj, size_t line, const std::string& where) {
    MatchingItem item;
    item.line = line;
    if (std::string why = parse_item(obj, opts, item); !why.empty()) {
      item.bad = true;
      item.reason = where + why;
    }
    add(std::move(item));
  };
  auto on_bad = [&](size_t line, std::string reason) {
    MatchingItem item;
    item.line = line;
    item.bad = true;
    item.reason = std::move(reason);
    add(std::move(item));
  };
  for_each_jsonl_object(text, name, opts.max_line_bytes, on_object, on_bad);
  return out;
}

ParsedMatching read_matching_file(const std::string& path, const MatchingOptions& opts) {
  return parse_matching_jsonl(read_text_file_capped(path, opts.max_line_bytes), path, opts);
}

}  // namespace bt::data
