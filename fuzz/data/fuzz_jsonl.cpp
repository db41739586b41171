// Any bytes as a JSONL captions file: must parse or throw bt::Error, both in error and skip mode.
#include <cstddef>
#include <cstdint>

#include "common/error.h"
#include "data/captions_parse.h"

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
  }
  return 0;
}
