// Any bytes as a JSONL captions file and as a JSONL matching file: must parse or throw bt::Error, both in error
// and skip mode; every kept row satisfies its reader's contract.
#include <cstddef>
#include <cstdint>

#include "common/error.h"
#include "data/captions_parse.h"
#include "data/matching_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto mode : {bt::data::OnBad::kError, bt::data::OnBad::kSkip}) {
    bt::data::CaptionsOptions o;
    o.on_bad_row = mode;
    try {
      auto p = bt::data::parse_jsonl(text, "fuzz.jsonl", o);
      for (const auto& r : p.rows)
        if (!r.bad && (r.image.empty() || r.caption.empty())) __builtin_trap();
    } catch (const bt::Error&) {
    }
    bt::data::MatchingOptions m;
    m.on_bad_row = mode;
    try {
      auto p = bt::data::parse_matching_jsonl(text, "fuzz.jsonl", m);
      for (const auto& r : p.rows)
        if (!r.bad && (r.image.empty() || r.choices.empty() || r.label < 0 || size_t(r.label) >= r.choices.size()))
          __builtin_trap();
    } catch (const bt::Error&) {
    }
  }
  return 0;
}
