// libFuzzer target for the untrusted safetensors header: parse() must either throw bt::Error or return views
// that lie inside the input.
#include <cstdint>
#include <cstdlib>

#include "checkpoint/safetensors.h"
#include "common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto f = bt::checkpoint::SafeTensors::parse(data, size, "fuzz");
    volatile uint8_t sink = 0;
    for (const auto& t : f.tensors()) {
      if (t.data < data || t.data + t.nbytes > data + size) std::abort();
      if (static_cast<uint64_t>(t.numel()) * bt::checkpoint::dtype_size(t.dtype) != t.nbytes) std::abort();
      if (t.nbytes) sink = sink ^ t.data[0] ^ t.data[t.nbytes - 1];  // touch both ends under ASan
    }
    (void)sink;
  } catch (const bt::Error&) {
  }
  return 0;
}
