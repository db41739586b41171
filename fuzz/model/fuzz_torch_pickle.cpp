// libFuzzer target for the state-dict unpickler (data.pkl of pytorch_model.bin): it must either throw bt::Error
// or return records whose storage requirement is computable; nothing else (no crash, no leak, no hang).
#include <cstdint>

#include "common/error.h"
#include "model/torch_pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    for (const auto& r : bt::ptbin::unpickle_state_dict(data, size, "fuzz")) {
      if (r.shape.size() != r.strides.size()) __builtin_trap();
      bt::ptbin::required_storage_bytes(r, "fuzz");
    }
  } catch (const bt::Error&) {
  }
  return 0;
}
