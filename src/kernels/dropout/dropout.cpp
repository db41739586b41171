#include "kernels/dropout/dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "kernels/bf16.h"
#include "kernels/dropout/dropout_mask.h"

namespace bt::kernels {

using torch::Tensor;

namespace {

// out[i] = in[i] * scale where element i is kept, else 0; i from b to e (a range of the whole tensor).
BT_CPU_KERNEL(mask_f32,
              (const float* in, float* out, uint32_t b, uint32_t e, uint32_t s1, uint32_t s2, uint32_t threshold,
               float scale),
              (in, out, b, e, s1, s2, threshold, scale)) {
  for (uint32_t i = b; i < e; ++i) out[i] = element_hash(i, s1, s2) >= threshold ? in[i] * scale : 0.0f;
}

// The same on bf16 bits: widened, scaled in float, rounded back as torch rounds (kernels/bf16.h: vectorises).
BT_CPU_KERNEL(mask_bf16,
              (const uint16_t* in, uint16_t* out, uint32_t b, uint32_t e, uint32_t s1, uint32_t s2, uint32_t threshold,
               float scale),
              (in, out, b, e, s1, s2, threshold, scale)) {
  for (uint32_t i = b; i < e; ++i) {
    const uint32_t keep = 0u - static_cast<uint32_t>(element_hash(i, s1, s2) >= threshold);
    out[i] = bf16_bits_from_float_bits(float_bits(float_from_bf16_bits(in[i]) * scale) & keep);  // dropped: +0
  }
}

// x with the mask of `seed` applied (a new contiguous tensor of x's dtype).
Tensor masked(const Tensor& x, uint64_t seed, double p) {
  const Tensor xc = x.contiguous();
  Tensor out = torch::empty_like(xc, at::MemoryFormat::Contiguous);
  const uint32_t s1 = seed_low(seed), s2 = seed_high(seed), threshold = drop_threshold(p);
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  const bool bf16 = xc.scalar_type() == at::kBFloat16;
  const void* in = xc.data_ptr();
  void* dst = out.data_ptr();
  at::parallel_for(0, xc.numel(), 1 << 15, [&](int64_t b, int64_t e) {
    if (bf16)
      mask_bf16(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(dst), static_cast<uint32_t>(b),
                static_cast<uint32_t>(e), s1, s2, threshold, scale);
    else
      mask_f32(static_cast<const float*>(in), static_cast<float*>(dst), static_cast<uint32_t>(b),
               static_cast<uint32_t>(e), s1, s2, threshold, scale);
  });
  return out;
}

struct DropoutFn : torch::autograd::Function<DropoutFn> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, const Tensor& x, double p) {
    const uint64_t seed = draw_dropout_seed();
    ctx->saved_data["seed"] = static_cast<int64_t>(seed);
    ctx->saved_data["p"] = p;
    return masked(x, seed, p);
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    if (!grads[0].defined()) return {Tensor(), Tensor()};
    const auto seed = static_cast<uint64_t>(ctx->saved_data["seed"].toInt());
    return {masked(grads[0], seed, ctx->saved_data["p"].toDouble()), Tensor()};
  }
};

bool fused_applies(const Tensor& x, double p) {
  return x.device().is_cpu() && (x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16) && p > 0 &&
         p < 1 && x.numel() > 0 && x.numel() <= std::numeric_limits<uint32_t>::max();
}

}  // namespace

uint64_t draw_dropout_seed() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get<at::CPUGeneratorImpl>()->random64();
}

Tensor dropout(const Tensor& x, double p, bool train) {
  if (!train || p == 0) return x;
  if (!fused_applies(x, p)) return torch::dropout(x, p, train);
  RECORD_FUNCTION("bt::dropout", std::vector<c10::IValue>{});
  if (torch::GradMode::is_enabled() && x.requires_grad()) return DropoutFn::apply(x, p);
  return masked(x, draw_dropout_seed(), p);
}

}  // namespace bt::kernels
