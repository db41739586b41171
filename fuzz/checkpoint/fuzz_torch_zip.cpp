// libFuzzer target for torch.save zip archives (central directory, zip64, local headers, then the unpickler and
// the storage checks): parse() must either throw bt::Error or return tensors whose bytes lie inside the input.
#include <cstdint>

#include "checkpoint/torch_zip.h"
#include "common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto c = bt::checkpoint::TorchCheckpoint::parse(data, size, "fuzz");
    volatile uint8_t sink = 0;
    for (const auto& t : c.tensors()) {
      if (t.storage < data || t.storage + t.storage_bytes > data + size) __builtin_trap();
      if (bt::checkpoint::required_storage_bytes(t.rec, "fuzz") > t.storage_bytes) __builtin_trap();
      if (t.storage_bytes) sink = sink ^ t.storage[0] ^ t.storage[t.storage_bytes - 1];
    }
    (void)sink;
  } catch (const bt::Error&) {
  }
  return 0;
}
