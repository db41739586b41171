// Hands C++ buffers to Python as DLPack capsules ("dltensor"), so torch (torch.utils.dlpack.from_dlpack, 1.13 and
// 2.x) and numpy wrap them without a copy and without bridgetune linking libtorch.
//
// Contract:
//  - The capsule's DLManagedTensor keeps `owner` alive; its deleter (called by the consumer once its tensor dies, or
//    by the capsule's destructor when nobody consumed it) drops the reference. `data` must stay valid while
//    `owner` lives. Shapes are C-contiguous; explicit strides are given (torch 1.13 needs them).
//  - Only CPU memory (kDLCPU): torch 1.13 accepts no other host device type, so pinning happens in Python.
#pragma once
#include <Python.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace bt::py {

enum class DType { kFloat32, kInt64, kUInt8 };

// A new reference to a "dltensor" capsule viewing `data` with `shape`; throws on allocation failure.
PyObject* make_dlpack_capsule(std::shared_ptr<void> owner, void* data, DType dtype, std::vector<int64_t> shape);

}  // namespace bt::py
