#include "model/cpu_gemm.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "model/autocast.h"
#include "model/bf16.h"

namespace bt::model {

using torch::Tensor;

namespace {

// oneDNN's C API (dnnl.h, stable since v1.0): row-major C = alpha op(A) op(B) + beta C; 0 = dnnl_success.
// sgemm: float32 operands; gemm_bf16bf16f32: bf16 operands (as uint16_t bits), float32 accumulation and C.
using Sgemm = int (*)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                      int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
using GemmBf16 = int (*)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
                         int64_t lda, const uint16_t* b, int64_t ldb, float beta, float* c, int64_t ldc);

void* find_onednn(const char* name) {
  if (auto* f = dlsym(RTLD_DEFAULT, name)) return f;
  // libtorch loaded RTLD_LOCAL (a Python extension): its libdnnl is mapped but not in the global scope.
  if (void* lib = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_NOLOAD)) return dlsym(lib, name);
  return nullptr;
}

Sgemm sgemm_fn() {
  static const auto fn = reinterpret_cast<Sgemm>(find_onednn("dnnl_sgemm"));
  return fn;
}

GemmBf16 gemm_bf16_fn() {
  static const auto fn = reinterpret_cast<GemmBf16>(find_onednn("dnnl_gemm_bf16bf16f32"));
  return fn;
}

std::atomic<bool>& onednn_wanted() {
  static std::atomic<bool> on{[] {
    const char* v = std::getenv("BRIDGETUNE_CPU_GEMM");
    return !(v && std::strcmp(v, "torch") == 0);
  }()};
  return on;
}

bool onednn_available() { return onednn_wanted().load() && sgemm_fn(); }
// Whether oneDNN runs this call's float32 products: available, and not under CPU autocast (which casts to bf16).
bool onednn_on() { return onednn_available() && !AutocastState::current().cpu; }
// Whether it runs them in bf16: under CPU autocast to bf16, with the casts autocast would make.
bool onednn_bf16_on() {
  if (!onednn_wanted().load() || !gemm_bf16_fn()) return false;
  const AutocastState autocast = AutocastState::current();
  return autocast.cpu && autocast.cpu_dtype == at::kBFloat16;
}

// An operand oneDNN's sgemm can read: a non-empty float32 CPU tensor (a meta tensor's device is meta, not CPU).
bool onednn_operand(const Tensor& t) {
  return t.device().is_cpu() && t.scalar_type() == at::kFloat && t.numel() > 0;
}

// C[m, n] (row-major, ldc = n) = alpha op(A) op(B): the one call into oneDNN, its status checked.
void sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float* c) {
  const int status = sgemm_fn()(ta, tb, m, n, k, alpha, a, lda, b, ldb, 0.0f, c, n);
  TORCH_CHECK(status == 0, "oneDNN sgemm failed (status ", status, ") for [", m, ", ", k, "] x [", k, ", ", n, "]");
}

// C[m, n] = op(A) op(B), row-major, every operand contiguous.
void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const Tensor& a, const Tensor& b, Tensor& c) {
  sgemm(ta, tb, m, n, k, 1.0f, a.data_ptr<float>(), ta == 'N' ? k : m, b.data_ptr<float>(), tb == 'N' ? n : k,
        c.data_ptr<float>());
}

// ---- batched products over 4-D [B, H, rows, cols] operands whose rows are unit-stride ----

// A [B, H, R, C] tensor read in place: matrix (i, j) starts at ptr + i*s0 + j*s1, rows ld apart.
struct Mats {
  const float* ptr;
  int64_t s0, s1, ld;
  const float* at(int64_t i, int64_t j) const { return ptr + i * s0 + j * s1; }
};

bool rows_unit_stride(const Tensor& t) { return t.dim() == 4 && (t.size(3) <= 1 || t.stride(3) == 1); }

Tensor in_place_or_copy(const Tensor& t) { return rows_unit_stride(t) && t.stride(2) >= t.size(3) ? t : t.contiguous(); }

Mats mats(const Tensor& t) {
  return {t.data_ptr<float>(), t.stride(0), t.stride(1), t.size(2) <= 1 ? std::max<int64_t>(1, t.size(3)) : t.stride(2)};
}

// out[i, j] = alpha op(a[i, j]) op(b[i, j]) for every (i, j), out contiguous [B, H, m, n]; one single-threaded
// GEMM per matrix on torch's threads (inside the parallel region oneDNN runs sequentially).
void gemm_batched(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const Tensor& a, const Tensor& b,
                  Tensor& out) {
  const Mats A = mats(a), B = mats(b);
  const int64_t heads = out.size(1), count = out.size(0) * heads;
  float* c = out.data_ptr<float>();
  at::parallel_for(0, count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t idx = begin; idx < end; ++idx) {
      const int64_t i = idx / heads, j = idx % heads;
      sgemm(ta, tb, m, n, k, alpha, A.at(i, j), A.ld, B.at(i, j), B.ld, c + idx * m * n);
    }
  });
}

// a [B, H, M, K] (trans_a: stored [B, H, K, M]) times b [B, H, K, N] (trans_b: stored [B, H, N, K]).
Tensor product(const Tensor& a, bool ta, const Tensor& b, bool tb, float alpha) {
  const int64_t m = ta ? a.size(3) : a.size(2), k = ta ? a.size(2) : a.size(3), n = tb ? b.size(2) : b.size(3);
  auto out = torch::empty({a.size(0), a.size(1), m, n}, a.options().memory_format(at::MemoryFormat::Contiguous));
  gemm_batched(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, b, out);
  return out;
}

struct OneDnnBatchedMatmulFn : torch::autograd::Function<OneDnnBatchedMatmulFn> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, const Tensor& a, const Tensor& b, bool tb, double alpha) {
    ctx->save_for_backward({a, b});
    ctx->saved_data["tb"] = tb;
    ctx->saved_data["alpha"] = alpha;
    return product(a, false, b, tb, static_cast<float>(alpha));
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const Tensor &a = saved[0], &b = saved[1];
    const bool tb = ctx->saved_data["tb"].toBool();
    const auto alpha = static_cast<float>(ctx->saved_data["alpha"].toDouble());
    const Tensor g = grads[0].contiguous();
    Tensor ga, gb;
    // y = alpha a op(b): da = alpha g op(b)^T; db = alpha a^T g (op = none) or alpha g^T a (op = transpose)
    if (ctx->needs_input_grad(0)) ga = product(g, false, b, !tb, alpha);
    if (ctx->needs_input_grad(1)) gb = tb ? product(g, true, a, false, alpha) : product(a, true, g, false, alpha);
    return {ga, gb, Tensor(), Tensor()};
  }
};

Tensor forward_2d(const Tensor& x2, const Tensor& w, const Tensor& b) {
  auto y = torch::empty({x2.size(0), w.size(0)}, x2.options());
  gemm('N', 'T', x2.size(0), w.size(0), w.size(1), x2, w, y);
  if (b.defined()) y.add_(b);
  return y;
}

struct OneDnnLinearFn : torch::autograd::Function<OneDnnLinearFn> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, const Tensor& x2, const Tensor& w, const Tensor& b) {
    ctx->save_for_backward({x2, w});
    ctx->saved_data["has_bias"] = b.numel() > 0;
    return forward_2d(x2, w, b.numel() > 0 ? b : Tensor());
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const Tensor &x2 = saved[0], &w = saved[1];
    const Tensor g = grads[0].contiguous();
    const int64_t m = x2.size(0), k = x2.size(1), n = w.size(0);
    Tensor gx, gw, gb;
    if (ctx->needs_input_grad(0)) {
      gx = torch::empty({m, k}, x2.options());
      gemm('N', 'N', m, k, n, g, w, gx);  // dY W
    }
    if (ctx->needs_input_grad(1)) {
      gw = torch::empty({n, k}, w.options());
      gemm('T', 'N', n, k, m, g, x2, gw);  // dY^T X
    }
    if (ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2)) gb = g.sum(0);
    return {gx, gw, gb};
  }
};

// ---- Linear under CPU autocast to bf16 ----
// autocast's own linear casts x, W and b to bf16 and runs a bf16 GEMM with a bf16 result; its backward returns bf16
// gradients that are cast again to float32 for float32 inputs. Here: the same bf16 operands and rounded result, but
// oneDNN's bf16 GEMM (1.1-1.4x libtorch 1.13's bf16 mm on the small preset's shapes: PRESET=small gemm_bench.py)
// with its float32 accumulator rounded once together with the bias, and the gradients of float32 inputs (W, b,
// a float32 x) kept in float32 rather than rounded to bf16 and widened again.

// C[m, n] (row-major, float32, ldc = n) = op(A) op(B) on contiguous bf16 operands.
void gemm_bf16(char ta, char tb, int64_t m, int64_t n, int64_t k, const Tensor& a, const Tensor& b, float* c) {
  const int status = gemm_bf16_fn()(ta, tb, m, n, k, 1.0f, bf16_bits_of(a), ta == 'N' ? k : m, bf16_bits_of(b),
                                    tb == 'N' ? n : k, 0.0f, c, n);
  TORCH_CHECK(status == 0, "oneDNN gemm_bf16bf16f32 failed (status ", status, ") for [", m, ", ", k, "] x [", k,
              ", ", n, "]");
}

// out[r, j] = bf16(acc[r, j] + bias[j]) for rows [r0, r1) of n columns; bias may be null.
BT_VECTOR_CLONES void round_rows(const float* acc, const float* bias, uint16_t* out, int64_t r0, int64_t r1,
                                 int64_t n) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* a = acc + r * n;
    uint16_t* o = out + r * n;
    if (bias)
      for (int64_t j = 0; j < n; ++j) o[j] = bf16_bits(a[j] + bias[j]);
    else
      for (int64_t j = 0; j < n; ++j) o[j] = bf16_bits(a[j]);
  }
}

// y [m, n] bf16 = xb [m, k] wb [n, k]^T + bias (float32 holding bf16 values, or undefined).
Tensor forward_2d_bf16(const Tensor& xb, const Tensor& wb, const Tensor& bias) {
  const int64_t m = xb.size(0), k = xb.size(1), n = wb.size(0);
  auto acc = torch::empty({m, n}, xb.options().dtype(at::kFloat));
  gemm_bf16('N', 'T', m, n, k, xb, wb, acc.data_ptr<float>());
  auto y = torch::empty({m, n}, xb.options());
  const float* a = acc.data_ptr<float>();
  const float* b = bias.defined() ? bias.data_ptr<float>() : nullptr;
  uint16_t* out = bf16_bits_of(y);
  at::parallel_for(0, m, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n)),
                   [&](int64_t r0, int64_t r1) { round_rows(a, b, out, r0, r1, n); });
  return y;
}

// sums[j] += g[r, j] over rows [0, m), columns [j0, j1) of n: the bias gradient, accumulated in float32.
BT_VECTOR_CLONES void add_rows(const uint16_t* g, float* sums, int64_t m, int64_t n, int64_t j0, int64_t j1) {
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = j0; j < j1; ++j) sums[j] += float_from_bf16_bits(g[r * n + j]);
}

// The column sums of a contiguous bf16 [m, n] as float32, without a widened copy of it.
Tensor column_sums_f32(const Tensor& g) {
  const int64_t m = g.size(0), n = g.size(1);
  auto sums = torch::zeros({n}, g.options().dtype(at::kFloat));
  const uint16_t* in = bf16_bits_of(g);
  float* out = sums.data_ptr<float>();
  at::parallel_for(0, n, 64, [&](int64_t j0, int64_t j1) { add_rows(in, out, m, n, j0, j1); });
  return sums;
}

Tensor to_bf16(const Tensor& t) { return t.to(at::kBFloat16).contiguous(); }
// The bias as autocast's linear sees it: rounded to bf16 (and widened again for the float32 epilogue).
Tensor bf16_rounded(const Tensor& bias) { return bias.numel() > 0 ? to_bf16(bias).to(at::kFloat) : Tensor(); }

struct OneDnnBf16LinearFn : torch::autograd::Function<OneDnnBf16LinearFn> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, const Tensor& x2, const Tensor& w, const Tensor& b) {
    const Tensor xb = to_bf16(x2), wb = to_bf16(w);
    ctx->save_for_backward({xb, wb});
    ctx->saved_data["x_dtype"] = static_cast<int64_t>(x2.scalar_type());
    ctx->saved_data["has_bias"] = b.numel() > 0;
    return forward_2d_bf16(xb, wb, bf16_rounded(b));
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const Tensor &xb = saved[0], &wb = saved[1];
    const Tensor g = to_bf16(grads[0]);
    const int64_t m = xb.size(0), k = xb.size(1), n = wb.size(0);
    const auto f32 = xb.options().dtype(at::kFloat);
    Tensor gx, gw, gb;
    if (ctx->needs_input_grad(0)) {
      gx = torch::empty({m, k}, f32);
      gemm_bf16('N', 'N', m, k, n, g, wb, gx.data_ptr<float>());  // dY W
      const auto x_dtype = static_cast<at::ScalarType>(ctx->saved_data["x_dtype"].toInt());
      if (x_dtype != at::kFloat) gx = gx.to(x_dtype);
    }
    if (ctx->needs_input_grad(1)) {
      gw = torch::empty({n, k}, f32);
      gemm_bf16('T', 'N', n, k, m, g, xb, gw.data_ptr<float>());  // dY^T X
    }
    if (ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2)) gb = column_sums_f32(g);
    return {gx, gw, gb};
  }
};

// A float32 weight and bias of the model's, and an x of matching width (its dtype is each path's to check).
bool linear_operands(const Tensor& x, const Tensor& w, const Tensor& b) {
  return onednn_operand(w) && (!b.defined() || b.scalar_type() == at::kFloat) && x.dim() >= 1 && w.dim() == 2 &&
         x.size(-1) == w.size(1);
}

bool linear_applies(const Tensor& x, const Tensor& w, const Tensor& b) {
  return onednn_on() && onednn_operand(x) && linear_operands(x, w, b);
}

// Under bf16 autocast: an x autocast would cast to bf16 (float32 or bf16).
bool bf16_linear_applies(const Tensor& x, const Tensor& w, const Tensor& b) {
  const bool castable = x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16;
  return onednn_bf16_on() && x.device().is_cpu() && castable && x.numel() > 0 && linear_operands(x, w, b);
}

bool batched_applies(const Tensor& a, const Tensor& b) {
  return onednn_on() && onednn_operand(a) && onednn_operand(b) && a.dim() == 4 && b.dim() == 4 &&
         a.size(0) == b.size(0) && a.size(1) == b.size(1);
}

}  // namespace

Tensor batched_matmul(const Tensor& a, const Tensor& b, bool transpose_b, double divide_by) {
  if (!batched_applies(a, b)) {
    auto y = torch::matmul(a, transpose_b ? b.transpose(-1, -2) : b);
    return divide_by == 1.0 ? y : y / divide_by;
  }
  RECORD_FUNCTION("bt::batched_matmul (oneDNN)", std::vector<c10::IValue>{});  // a row in profiles (op_profile.py)
  const double alpha = 1.0 / divide_by;  // exact for a power-of-two divisor (sqrt(64) = 8: every preset's heads)
  TORCH_CHECK(a.size(3) == (transpose_b ? b.size(3) : b.size(2)), "batched_matmul: inner sizes differ: ",
              a.sizes(), " x ", b.sizes(), transpose_b ? "^T" : "");
  const Tensor a_ = in_place_or_copy(a), b_ = in_place_or_copy(b);
  const bool grad = torch::GradMode::is_enabled() && (a.requires_grad() || b.requires_grad());
  return grad ? OneDnnBatchedMatmulFn::apply(a_, b_, transpose_b, alpha)
              : product(a_, false, b_, transpose_b, static_cast<float>(alpha));
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const bool bf16 = bf16_linear_applies(x, weight, bias);
  if (!bf16 && !linear_applies(x, weight, bias)) return torch::linear(x, weight, bias);
  RECORD_FUNCTION(bf16 ? "bt::linear (oneDNN bf16)" : "bt::linear (oneDNN)", std::vector<c10::IValue>{});
  auto out_shape = x.sizes().vec();
  out_shape.back() = weight.size(0);
  const bool grad = torch::GradMode::is_enabled() &&
                    (x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad()));
  // libtorch 1.13's autograd functions take no undefined inputs: no bias travels as an empty tensor.
  const Tensor b = bias.defined() ? bias : torch::empty({0}, weight.options());
  Tensor y;
  if (bf16) {  // the bf16 casts make x and W contiguous
    const Tensor x2 = x.reshape({-1, x.size(-1)});
    y = grad ? OneDnnBf16LinearFn::apply(x2, weight, b)
             : forward_2d_bf16(to_bf16(x2), to_bf16(weight), bf16_rounded(b));
  } else {
    const Tensor x2 = x.reshape({-1, x.size(-1)}).contiguous(), w = weight.contiguous();
    y = grad ? OneDnnLinearFn::apply(x2, w, b) : forward_2d(x2, w, bias);
  }
  return y.view(out_shape);
}

std::string cpu_gemm_name() { return onednn_available() ? "onednn" : "torch"; }

void set_cpu_gemm_onednn(bool on) { onednn_wanted().store(on); }

}  // namespace bt::model
