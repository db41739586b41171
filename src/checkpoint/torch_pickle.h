// A restricted reader of the pickle torch.save writes for a state dict (data.pkl of the zip format), libtorch-free.
//
// Why our own and not torch::pickle_load / the jit Unpickler: those resolve any global the TorchScript type
// system knows and materialise every storage as a tensor in memory (no mmap, so a 3.7 GB checkpoint costs its
// size again), their API differs between Debian's libtorch 1.13 and 2.x, and they cannot be fuzzed without
// libtorch. This reader executes nothing: it builds plain values and accepts only the globals a state dict holds
// (collections.OrderedDict, torch._utils._rebuild_tensor_v2 / _rebuild_parameter, torch.<T>Storage types); any
// other global is an error naming it. It returns one TensorRecord per tensor; the bytes stay in the archive.
// Memory and time are linear in the pickle's size (every opcode consumes input).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/safetensors.h"

namespace bt::checkpoint {

// A tensor of the state dict: a strided view (in elements) of the storage stored as data/<storage_key>.
struct TensorRecord {
  std::string name;
  checkpoint::DType dtype = checkpoint::DType::F32;
  std::vector<int64_t> shape, strides;
  int64_t storage_offset = 0;
  std::string storage_key;
};

// Parse a state-dict pickle: a dict (or OrderedDict) of name -> tensor. `what` names the source in errors.
// Throws bt::Error on anything else (other globals, malformed or truncated pickles, non-tensor values).
std::vector<TensorRecord> unpickle_state_dict(const uint8_t* data, size_t size, std::string_view what);

// Bytes the record needs in its storage: (offset + the largest index it reaches + 1) x element size; 0 for an
// empty tensor. Throws bt::Error (naming `what` and the tensor) when that overflows.
uint64_t required_storage_bytes(const TensorRecord& r, std::string_view what);

}  // namespace bt::checkpoint
