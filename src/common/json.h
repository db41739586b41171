// The one JSON entry point for text the tool did not write itself (configs, indexes, tokenizers, states, JSONL
// rows, shard captions): nesting deeper than kMaxJsonDepth is refused while parsing, before a deep DOM exists
// (nlohmann destroys its DOM recursively: a million-deep array in an unknown field would overflow the stack).
// Header-only, like the rest of common/; its users link nlohmann_json themselves.
#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/error.h"

namespace bt {

inline constexpr int kMaxJsonDepth = 64;  // real configs and tokenizers nest under 10

struct JsonTooDeep : std::runtime_error {
  JsonTooDeep() : std::runtime_error(str("JSON nests deeper than ", kMaxJsonDepth, " levels")) {}
};

// Parses `text`; throws nlohmann::json::exception for bad syntax and JsonTooDeep past `max_depth`.
template <class Json = nlohmann::json>
Json parse_json_limited(std::string_view text, int max_depth = kMaxJsonDepth) {
  return Json::parse(text.begin(), text.end(), [max_depth](int depth, typename Json::parse_event_t, Json&) {
    if (depth > max_depth) throw JsonTooDeep();
    return true;
  });
}

// The same, discarded (is_discarded()) instead of any error: for lines of a run's own logs, where a torn line is
// skipped.
inline nlohmann::json try_parse_json(std::string_view text) {
  try {
    return parse_json_limited(text);
  } catch (const std::exception&) {
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
}

// A whole JSON document from `what` (a file name): bt::Error "WHAT: not valid JSON (...)" or "WHAT: JSON nests
// deeper than 64 levels".
inline nlohmann::json parse_json_text(std::string_view text, const std::string& what) {
  try {
    return parse_json_limited(text);
  } catch (const JsonTooDeep& e) {
    fail(what, ": ", e.what());
  } catch (const nlohmann::json::exception& e) {
    std::string msg = e.what();
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    fail(what, ": not valid JSON (", msg.substr(0, 200), ")");
  }
}

}  // namespace bt
