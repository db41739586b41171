#include "kernels/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace bt::kernels {

namespace {

// Only CPU and CUDA autocast are used: every device type other than CUDA is treated as the CPU.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool is_enabled(bool cuda) { return at::autocast::is_autocast_enabled(cuda ? at::kCUDA : at::kCPU); }
c10::ScalarType dtype_of(bool cuda) { return at::autocast::get_autocast_dtype(cuda ? at::kCUDA : at::kCPU); }
void set_dtype(bool cuda, c10::ScalarType d) { at::autocast::set_autocast_dtype(cuda ? at::kCUDA : at::kCPU, d); }
void set_enabled(bool cuda, bool on) { at::autocast::set_autocast_enabled(cuda ? at::kCUDA : at::kCPU, on); }
#else
bool is_enabled(bool cuda) { return cuda ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled(); }
c10::ScalarType dtype_of(bool cuda) {
  return cuda ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}
void set_dtype(bool cuda, c10::ScalarType d) {
  if (cuda) at::autocast::set_autocast_gpu_dtype(d);
  else at::autocast::set_autocast_cpu_dtype(d);
}
void set_enabled(bool cuda, bool on) {
  if (cuda) at::autocast::set_enabled(on);
  else at::autocast::set_cpu_enabled(on);
}
#endif

}  // namespace

AutocastState AutocastState::current() {
  AutocastState a;
  a.cpu = is_enabled(false), a.cuda = is_enabled(true);
  a.cpu_dtype = dtype_of(false), a.cuda_dtype = dtype_of(true);
  return a;
}

void AutocastState::apply() const {
  set_dtype(false, cpu_dtype), set_enabled(false, cpu);
  set_dtype(true, cuda_dtype), set_enabled(true, cuda);
}

AutocastScope::AutocastScope(bool enabled, const c10::Device& device, c10::ScalarType dtype)
    : on_(enabled), type_(device.type()) {
  if (!on_) return;
  set_dtype(type_ == c10::kCUDA, dtype);
  set_enabled(type_ == c10::kCUDA, true);
}

AutocastScope::~AutocastScope() {
  if (!on_) return;
  set_enabled(type_ == c10::kCUDA, false);
  at::autocast::clear_cache();
}

}  // namespace bt::kernels
