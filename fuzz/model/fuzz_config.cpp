// libFuzzer target for config.json (untrusted: it comes with any downloaded model folder). config_from_json()
// must either throw bt::Error or return a config that passes its own limits and survives a write-back round
// trip; never another exception, a wrap-around or an unbounded allocation.
#include <cstdint>
#include <cstdlib>

#include "common/error.h"
#include "model/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    const bt::model::BridgeTowerConfig c = bt::model::config_from_json(j, "fuzz");
    if (!(c.estimated_parameters() <= 4e9) || c.vision.num_channels < 1 || c.text.intermediate_size < 1) std::abort();
    // What we write back must read back the same.
    const bt::model::BridgeTowerConfig back = bt::model::config_from_json(c.to_json(), "fuzz");
    if (back.to_json() != c.to_json()) std::abort();
  } catch (const bt::Error&) {
  }
  return 0;
}
