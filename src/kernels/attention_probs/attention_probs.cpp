#include "kernels/attention_probs/attention_probs.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/bf16.h"
#include "kernels/dropout/dropout.h"
#include "kernels/dropout/dropout_mask.h"
#include "kernels/fast_exp.h"
#include "kernels/gemm/gemm.h"

namespace bt::kernels {

using torch::Tensor;

namespace {

#define BT_INLINE inline __attribute__((always_inline))

// Float sums run in 16 lanes: GCC does not vectorise a float sum (its order) over one accumulator.
constexpr int kLanes = 16;

// The probabilities' dtype: bf16 bits or float32 (the composite's softmax output under autocast).
BT_INLINE float load(const uint16_t* p, int64_t j) { return float_from_bf16_bits(p[j]); }
BT_INLINE float load(const float* p, int64_t j) { return p[j]; }
BT_INLINE void store(uint16_t* p, int64_t j, float v) { p[j] = bf16_bits(v); }
BT_INLINE void store(float* p, int64_t j, float v) { p[j] = v; }

// One call's dropout (kernels/dropout/dropout_mask.h); off: every element kept, unscaled.
struct Drop {
  bool on = false;
  uint32_t s1 = 0, s2 = 0, threshold = 0;
  float scale = 1.0f;
};

// v * scale where element i is kept, else +0 (dropout.cpp's arithmetic, so the same bits).
BT_INLINE float dropped(float v, uint32_t i, const Drop& d) {
  const uint32_t keep = 0u - static_cast<uint32_t>(element_hash(i, d.s1, d.s2) >= d.threshold);
  return float_from_bits(float_bits(v * d.scale) & keep);
}

// Floats ordered as integers (sign-magnitude to two's complement): an integer max, which GCC vectorises (a float
// max it does not, for NaN's sake); a NaN orders above infinity, so a row with one is all NaN, as in torch.
BT_INLINE int32_t order_key(float f) {
  const auto b = static_cast<int32_t>(float_bits(f));
  return b ^ ((b >> 31) & 0x7fffffff);
}

BT_INLINE float row_max(const float* x, int64_t n) {
  int32_t m = std::numeric_limits<int32_t>::min();
  for (int64_t j = 0; j < n; ++j) {
    const int32_t k = order_key(x[j]);
    m = k > m ? k : m;
  }
  return float_from_bits(static_cast<uint32_t>(m ^ ((m >> 31) & 0x7fffffff)));
}

// x[j] = exp(x[j] - max); the sum.
BT_INLINE float exp_and_sum(float* x, int64_t n, float max) {
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      x[j + l] = fast_exp(x[j + l] - max);
      lane[l] += x[j + l];
    }
  float sum = 0;
  for (; j < n; ++j) {
    x[j] = fast_exp(x[j] - max);
    sum += x[j];
  }
  for (int l = 0; l < kLanes; ++l) sum += lane[l];
  return sum;
}

// Sum over j of a[j] * load(b, j).
template <typename Y>
BT_INLINE float dot(const float* a, const Y* b, int64_t n) {
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += a[j + l] * load(b, j + l);
  float sum = 0;
  for (; j < n; ++j) sum += a[j] * load(b, j);
  for (int l = 0; l < kLanes; ++l) sum += lane[l];
  return sum;
}

// The rows [r0, r1) of n: scores s (bf16, unscaled) -> probabilities y and, with dropout, out. Row r's mask is
// mask + (r / rows_per_mask) * n (one mask row per batch element); tmp holds n floats.
struct Rows {
  const uint16_t* s;
  const float* mask;
  int64_t n, rows_per_mask;
  float scale;
  Drop drop;
};

template <typename Y>
BT_INLINE void forward_rows(const Rows& a, Y* y, Y* out, float* tmp, int64_t r0, int64_t r1) {
  const int64_t n = a.n;
  for (int64_t r = r0; r < r1; ++r) {
    const uint16_t* s = a.s + r * n;
    // bf16(s * scale): the composite divides the bf16 scores in bf16 (exact for sqrt(64) = 8)
    for (int64_t j = 0; j < n; ++j) tmp[j] = float_from_bf16_bits(bf16_bits(float_from_bf16_bits(s[j]) * a.scale));
    if (a.mask) {
      const float* m = a.mask + (r / a.rows_per_mask) * n;
      for (int64_t j = 0; j < n; ++j) tmp[j] += m[j];
    }
    const float inv = 1.0f / exp_and_sum(tmp, n, row_max(tmp, n));
    Y* yr = y + r * n;
    for (int64_t j = 0; j < n; ++j) store(yr, j, tmp[j] * inv);
    if (!a.drop.on) continue;
    Y* o = out + r * n;
    const auto base = static_cast<uint32_t>(r * n);
    for (int64_t j = 0; j < n; ++j) store(o, j, dropped(load(yr, j), base + static_cast<uint32_t>(j), a.drop));
  }
}

// Backward of the same rows: g (the output's gradient, dtype Y) -> ds (bf16, the unscaled scores' gradient).
// The composite's roundings: the softmax gradient to bf16 (its own dtype or the cast to the scores' dtype), then
// times the scale in bf16.
template <typename Y>
BT_INLINE void backward_rows(const Rows& a, const Y* g, const Y* y, uint16_t* ds, float* tmp, int64_t r0,
                             int64_t r1) {
  const int64_t n = a.n;
  for (int64_t r = r0; r < r1; ++r) {
    const Y* gr = g + r * n;
    const Y* yr = y + r * n;
    const auto base = static_cast<uint32_t>(r * n);
    if (a.drop.on) {  // dropout's backward in the probabilities' dtype (rounded to it, as the composite's is)
      for (int64_t j = 0; j < n; ++j) {
        Y v;
        store(&v, 0, dropped(load(gr, j), base + static_cast<uint32_t>(j), a.drop));
        tmp[j] = load(&v, 0);
      }
    } else {
      for (int64_t j = 0; j < n; ++j) tmp[j] = load(gr, j);
    }
    const float total = dot(tmp, yr, n);
    uint16_t* d = ds + r * n;
    for (int64_t j = 0; j < n; ++j)
      d[j] = bf16_bits(float_from_bf16_bits(bf16_bits(load(yr, j) * (tmp[j] - total))) * a.scale);
  }
}

BT_CPU_KERNEL(forward_bf16, (const Rows& a, uint16_t* y, uint16_t* out, float* tmp, int64_t r0, int64_t r1),
              (a, y, out, tmp, r0, r1)) {
  forward_rows(a, y, out, tmp, r0, r1);
}
BT_CPU_KERNEL(forward_f32, (const Rows& a, float* y, float* out, float* tmp, int64_t r0, int64_t r1),
              (a, y, out, tmp, r0, r1)) {
  forward_rows(a, y, out, tmp, r0, r1);
}
BT_CPU_KERNEL(backward_bf16,
              (const Rows& a, const uint16_t* g, const uint16_t* y, uint16_t* ds, float* tmp, int64_t r0, int64_t r1),
              (a, g, y, ds, tmp, r0, r1)) {
  backward_rows(a, g, y, ds, tmp, r0, r1);
}
BT_CPU_KERNEL(backward_f32,
              (const Rows& a, const float* g, const float* y, uint16_t* ds, float* tmp, int64_t r0, int64_t r1),
              (a, g, y, ds, tmp, r0, r1)) {
  backward_rows(a, g, y, ds, tmp, r0, r1);
}

// A per-thread row of floats, grown to n.
float* scratch(int64_t n) {
  thread_local std::vector<float> row;
  if (static_cast<int64_t>(row.size()) < n) row.resize(static_cast<size_t>(n));
  return row.data();
}

// Runs f(r0, r1, tmp) over all rows of scores [B, H, L, n] in parallel, ~16K elements per task.
template <typename F>
void over_rows(const Tensor& scores, F&& f) {
  const int64_t n = scores.size(3), rows = scores.numel() / std::max<int64_t>(1, n);
  at::parallel_for(0, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n)),
                   [&](int64_t r0, int64_t r1) { f(r0, r1, scratch(n)); });
}

Rows rows_of(const Tensor& scores, const Tensor& mask, double scale, const Drop& drop) {
  return {bf16_bits_of(scores), mask.numel() > 0 ? mask.data_ptr<float>() : nullptr, scores.size(3),
          scores.size(1) * scores.size(2), static_cast<float>(scale), drop};
}

Drop drop_for(uint64_t seed, double p) {
  if (p <= 0) return {};
  return {true, seed_low(seed), seed_high(seed), drop_threshold(p), static_cast<float>(1.0 / (1.0 - p))};
}

// {probabilities, output}: output is the probabilities themselves without dropout.
std::pair<Tensor, Tensor> probs_forward(const Tensor& scores, const Tensor& mask, double scale, const Drop& drop) {
  const bool f32 = mask.numel() > 0;  // a float32 mask makes the sum float32 (type promotion)
  const auto opts = scores.options().dtype(f32 ? at::kFloat : at::kBFloat16);
  Tensor y = torch::empty(scores.sizes(), opts), out = drop.on ? torch::empty(scores.sizes(), opts) : y;
  const Rows a = rows_of(scores, mask, scale, drop);
  over_rows(scores, [&](int64_t r0, int64_t r1, float* tmp) {
    if (f32)
      forward_f32(a, y.data_ptr<float>(), out.data_ptr<float>(), tmp, r0, r1);
    else
      forward_bf16(a, bf16_bits_of(y), bf16_bits_of(out), tmp, r0, r1);
  });
  return {y, out};
}

Tensor probs_backward(const Tensor& grad, const Tensor& y, const Tensor& mask, double scale, const Drop& drop) {
  const Tensor g = grad.to(y.scalar_type()).contiguous();
  Tensor ds = torch::empty(y.sizes(), y.options().dtype(at::kBFloat16));
  const Rows a = rows_of(ds, mask, scale, drop);
  over_rows(ds, [&](int64_t r0, int64_t r1, float* tmp) {
    if (y.scalar_type() == at::kFloat)
      backward_f32(a, g.data_ptr<float>(), y.data_ptr<float>(), bf16_bits_of(ds), tmp, r0, r1);
    else
      backward_bf16(a, bf16_bits_of(g), bf16_bits_of(y), bf16_bits_of(ds), tmp, r0, r1);
  });
  return ds;
}

struct AttentionProbsFn : torch::autograd::Function<AttentionProbsFn> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, const Tensor& scores, const Tensor& mask, double scale,
                        double p) {
    const uint64_t seed = p > 0 ? draw_dropout_seed() : 0;
    auto [y, out] = probs_forward(scores, mask, scale, drop_for(seed, p));
    ctx->save_for_backward({y, mask});
    ctx->saved_data["seed"] = static_cast<int64_t>(seed);
    ctx->saved_data["p"] = p;
    ctx->saved_data["scale"] = scale;
    return out;
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto seed = static_cast<uint64_t>(ctx->saved_data["seed"].toInt());
    const Drop drop = drop_for(seed, ctx->saved_data["p"].toDouble());
    return {probs_backward(grads[0], saved[0], saved[1], ctx->saved_data["scale"].toDouble(), drop), Tensor(),
            Tensor(), Tensor()};
  }
};

// bf16 q and k on the CPU (the product is bf16), a mask the kernels read (float32 [B, 1, 1, S], no gradient), and
// element indices that fit the dropout hash's 32 bits.
bool fused_applies(const Tensor& q, const Tensor& k, const Tensor& mask) {
  if (!q.device().is_cpu() || q.scalar_type() != at::kBFloat16 || k.scalar_type() != at::kBFloat16 || q.dim() != 4 ||
      k.dim() != 4)
    return false;
  const int64_t b = q.size(0), s = k.size(2);
  if (mask.defined() && (mask.scalar_type() != at::kFloat || mask.requires_grad() || mask.dim() != 4 ||
                         mask.sizes() != at::IntArrayRef{b, 1, 1, s}))
    return false;
  return q.size(0) * q.size(1) * q.size(2) * s <= std::numeric_limits<uint32_t>::max();
}

}  // namespace

Tensor attention_weights_composite(const Tensor& q, const Tensor& k, const Tensor& mask, double dropout_p,
                                   bool train) {
  auto scores = batched_matmul(q, k, /*transpose_b=*/true, std::sqrt(static_cast<double>(q.size(-1))));
  if (mask.defined()) scores = scores + mask;
  auto probs = torch::softmax(scores, -1);
  return train && dropout_p > 0 ? kernels::dropout(probs, dropout_p, true) : probs;
}

Tensor attention_weights(const Tensor& q, const Tensor& k, const Tensor& mask, double dropout_p, bool train) {
  const bool drops_all = train && dropout_p >= 1;  // kernels::dropout's case, not the kernels'
  if (drops_all || !fused_applies(q, k, mask)) return attention_weights_composite(q, k, mask, dropout_p, train);
  const Tensor scores = batched_matmul(q, k, /*transpose_b=*/true).contiguous();
  RECORD_FUNCTION("bt::attention_probs", std::vector<c10::IValue>{});  // a row in profiles (op_profile.py)
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  const double p = train ? dropout_p : 0.0;
  const Tensor m = mask.defined() ? mask.contiguous() : torch::empty({0}, scores.options().dtype(at::kFloat));
  if (torch::GradMode::is_enabled() && scores.requires_grad()) return AttentionProbsFn::apply(scores, m, scale, p);
  const uint64_t seed = p > 0 ? draw_dropout_seed() : 0;
  return probs_forward(scores, m, scale, drop_for(seed, p)).second;
}

}  // namespace bt::kernels
