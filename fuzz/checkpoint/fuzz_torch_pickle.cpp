// libFuzzer target for the state-dict unpickler (data.pkl of pytorch_model.bin): it must either throw bt::Error
// or return records whose storage requirement is computable; nothing else (no crash, no leak, no hang).
#include <cstdint>

#include "checkpoint/torch_pickle.h"
#include "common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    for (const auto& r : bt::checkpoint::unpickle_state_dict(data, size, "fuzz")) {
      if (r.shape.size() != r.strides.size()) __builtin_trap();
      bt::checkpoint::required_storage_bytes(r, "fuzz");
    }
  } catch (const bt::Error&) {
  }
  return 0;
}
