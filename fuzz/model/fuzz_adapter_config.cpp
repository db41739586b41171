// libFuzzer target for adapter_config.json (untrusted: it comes with any shared LoRA folder). parse_adapter_config()
// must either throw bt::Error or return settings inside its own limits (model/lora_config.h: a whole rank in
// [1, kMaxLoraRank], lora_alpha > 0 and finite, lora_dropout in [0, 1), a target); never another exception.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/error.h"
#include "model/lora_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const bt::model::LoraSpec s =
        bt::model::parse_adapter_config(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    if (s.rank < 1 || s.rank > bt::model::kMaxLoraRank || !(s.alpha > 0) || !std::isfinite(s.alpha) ||
        !(s.dropout >= 0 && s.dropout < 1) || s.target_modules.empty())
      std::abort();
  } catch (const bt::Error&) {
  }
  return 0;
}
