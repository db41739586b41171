#include "kernels/bf16_cast/bf16_cast.h"

#include <ATen/Parallel.h>

#include "kernels/bf16.h"

namespace bt::kernels {

using torch::Tensor;

namespace {

BT_CPU_KERNEL(round_values, (const float* in, float* out, int64_t b, int64_t e), (in, out, b, e)) {
  for (int64_t i = b; i < e; ++i) out[i] = float_from_bf16_bits(bf16_bits(in[i]));
}

BT_CPU_KERNEL(widen, (const uint16_t* in, float* out, int64_t b, int64_t e), (in, out, b, e)) {
  for (int64_t i = b; i < e; ++i) out[i] = float_from_bf16_bits(in[i]);
}

BT_CPU_KERNEL(narrow, (const float* in, uint16_t* out, int64_t b, int64_t e), (in, out, b, e)) {
  for (int64_t i = b; i < e; ++i) out[i] = bf16_bits(in[i]);
}

constexpr int64_t kGrain = 1 << 15;

// float32 or bf16 in -> float32 holding bf16 values.
Tensor valued_f32(const Tensor& t) {
  const Tensor in = t.contiguous();
  Tensor out = torch::empty(in.sizes(), in.options().dtype(at::kFloat));
  float* o = out.data_ptr<float>();
  if (in.scalar_type() == at::kBFloat16) {
    const uint16_t* i = bf16_bits_of(in);
    at::parallel_for(0, in.numel(), kGrain, [&](int64_t b, int64_t e) { widen(i, o, b, e); });
  } else {
    const float* i = in.data_ptr<float>();
    at::parallel_for(0, in.numel(), kGrain, [&](int64_t b, int64_t e) { round_values(i, o, b, e); });
  }
  return out;
}

Tensor narrowed(const Tensor& f32) {
  const Tensor in = f32.contiguous();
  Tensor out = torch::empty(in.sizes(), in.options().dtype(at::kBFloat16));
  const float* i = in.data_ptr<float>();
  uint16_t* o = bf16_bits_of(out);
  at::parallel_for(0, in.numel(), kGrain, [&](int64_t b, int64_t e) { narrow(i, o, b, e); });
  return out;
}

bool kernel_applies(const Tensor& t) {
  return t.device().is_cpu() && (t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16);
}

struct Bf16ValuedFn : torch::autograd::Function<Bf16ValuedFn> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, const Tensor& t) {
    ctx->saved_data["bf16_input"] = t.scalar_type() == at::kBFloat16;
    return valued_f32(t);
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const Tensor& g = grads[0];
    return {ctx->saved_data["bf16_input"].toBool() ? narrowed(g.to(at::kFloat)) : g};
  }
};

struct RoundedToBf16Fn : torch::autograd::Function<RoundedToBf16Fn> {
  static Tensor forward(torch::autograd::AutogradContext*, const Tensor& f32) { return narrowed(f32); }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext*, torch::autograd::tensor_list grads) {
    return {valued_f32(grads[0].to(at::kBFloat16))};  // a bf16 gradient widened (exact)
  }
};

bool wants_grad(const Tensor& t) { return torch::GradMode::is_enabled() && t.requires_grad(); }

}  // namespace

Tensor bf16_valued(const Tensor& t) {
  TORCH_CHECK(kernel_applies(t), "bf16_valued: a float32 or bf16 CPU tensor, got ", t.toString());
  return wants_grad(t) ? Bf16ValuedFn::apply(t) : valued_f32(t);
}

Tensor rounded_to_bf16(const Tensor& f32) {
  TORCH_CHECK(f32.device().is_cpu() && f32.scalar_type() == at::kFloat, "rounded_to_bf16: a float32 CPU tensor, got ",
              f32.toString());
  return wants_grad(f32) ? RoundedToBf16Fn::apply(f32) : narrowed(f32);
}

}  // namespace bt::kernels
