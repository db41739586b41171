// Autocast (mixed precision) in one place: a scope that turns it on for one device type, and the calling
// thread's autocast state (read and re-applied by gradient checkpointing, whose recomputation runs on autograd's
// threads). libtorch 2.4 replaced the per-device setters (set_enabled, set_cpu_enabled, set_autocast_gpu_dtype,
// ...) by ones taking the device type; autocast.cpp is the only file that knows both.
#pragma once
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

namespace bt::kernels {

// The calling thread's autocast switches, CPU and CUDA.
struct AutocastState {
  bool cpu = false, cuda = false;
  c10::ScalarType cpu_dtype = c10::kBFloat16, cuda_dtype = c10::kHalf;
  static AutocastState current();
  void apply() const;
};

// For its lifetime, when `enabled`: autocast to `dtype` (bf16; fp16 for --fp16 on CUDA) on the device type of
// `device`. At its end autocast is off on that device type and the cast cache is cleared.
class AutocastScope {
 public:
  AutocastScope(bool enabled, const c10::Device& device, c10::ScalarType dtype = c10::kBFloat16);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool on_;
  c10::DeviceType type_;
};

}  // namespace bt::kernels
