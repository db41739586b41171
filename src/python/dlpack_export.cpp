#include "python/dlpack_export.h"

#include <new>
#include <utility>

namespace bt::py {
namespace {

// DLPack's ABI (dlpack.h v0.x, as torch 1.13 and numpy read it), declared here so the module needs no torch headers.
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // 0 int, 1 uint, 2 float
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
constexpr int32_t kDLCPU = 1;
constexpr char kCapsuleName[] = "dltensor";
constexpr char kUsedCapsuleName[] = "used_dltensor";

// One exported tensor: the DLManagedTensor, its shape/strides storage and the reference that keeps the bytes.
struct Export {
  DLManagedTensor managed{};
  std::vector<int64_t> shape, strides;
  std::shared_ptr<void> owner;
};

void delete_export(DLManagedTensor* t) { delete static_cast<Export*>(t->manager_ctx); }

// A capsule nobody consumed still owns its tensor; a consumed one was renamed and belongs to the consumer.
void capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kUsedCapsuleName)) return;
  auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (t) t->deleter(t);
  else PyErr_Clear();
}

DLDataType dl_type(DType d) {
  switch (d) {
    case DType::kFloat32: return {2, 32, 1};
    case DType::kInt64: return {0, 64, 1};
    case DType::kUInt8: return {1, 8, 1};
  }
  return {2, 32, 1};
}

}  // namespace

PyObject* make_dlpack_capsule(std::shared_ptr<void> owner, void* data, DType dtype, std::vector<int64_t> shape) {
  auto* e = new Export;
  e->owner = std::move(owner);
  e->shape = std::move(shape);
  e->strides.assign(e->shape.size(), 1);
  for (size_t i = e->shape.size(); i-- > 1;) e->strides[i - 1] = e->strides[i] * e->shape[i];
  DLTensor& t = e->managed.dl_tensor;
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(e->shape.size());
  t.dtype = dl_type(dtype);
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  t.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = delete_export;
  PyObject* capsule = PyCapsule_New(&e->managed, kCapsuleName, capsule_destructor);
  if (!capsule) {
    delete e;
    throw std::bad_alloc();
  }
  return capsule;
}

}  // namespace bt::py
