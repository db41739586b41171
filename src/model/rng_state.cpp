#include "model/rng_state.h"

#include <ATen/CPUGeneratorImpl.h>

namespace bt::model {

RngState RngState::save(const torch::Device& device) {
  RngState r;
  r.cpu = at::detail::getDefaultCPUGenerator().get_state();
  if (device.is_cuda()) {
    r.cuda_device = device;
    r.cuda = at::globalContext().defaultGenerator(device).get_state();
  }
  return r;
}

void RngState::restore() const {
  at::Generator cpu_gen = at::detail::getDefaultCPUGenerator();  // a handle sharing the global generator
  cpu_gen.set_state(cpu);
  if (cuda_device) {
    at::Generator g = at::globalContext().defaultGenerator(*cuda_device);
    g.set_state(cuda);
  }
}

}  // namespace bt::model
