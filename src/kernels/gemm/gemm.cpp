#include "kernels/gemm/gemm.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "common/cpu_isa.h"
#include "common/runtime.h"
#include "kernels/autocast.h"
#include "kernels/bf16.h"
#include "kernels/bf16_cast/bf16_cast.h"

namespace bt::kernels {

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

bool onednn_available() { return runtime_switches().cpu_gemm_onednn && sgemm_fn(); }  // BRIDGETUNE_CPU_GEMM
// Whether oneDNN runs this call's float32 products: available, and not under CPU autocast (which casts to bf16).
bool onednn_on() { return onednn_available() && !AutocastState::current().cpu; }

// ---- where bf16 GEMMs run: decided once per process ----
// oneDNN's gemm_bf16bf16f32 exists only from AVX512_CORE up (below, and under ONEDNN_MAX_CPU_ISA below it, it
// returns 3, "unimplemented"): one call on 1x1 operands tells. Elsewhere bf16 is emulated: the bf16 operands
// widened to float32 (exact) and multiplied by sgemm -- the same products and float32 accumulation, the result
// rounded alike -- which on an AVX2 CPU runs at float32's speed plus the casts, where libtorch 1.13's own bf16
// matmul there is a scalar loop.
enum class Bf16Gemm { kOneDnn, kEmulated };

bool onednn_bf16_gemm_works() {
  static const bool works = [] {
    const GemmBf16 fn = gemm_bf16_fn();
    if (!fn) return false;
    const uint16_t one = 0x3f80;  // bf16 1.0
    float c = 0;
    return fn('N', 'N', 1, 1, 1, 1.0f, &one, 1, &one, 1, 0.0f, &c, 1) == 0 && c == 1.0f;
  }();
  return works;
}

std::atomic<Bf16Gemm>& bf16_gemm_path() {
  static std::atomic<Bf16Gemm> path{onednn_bf16_gemm_works() ? Bf16Gemm::kOneDnn : Bf16Gemm::kEmulated};
  return path;
}

// Whether this call's Linear runs as a bf16 GEMM of ours: under CPU autocast to bf16, with the casts autocast
// would make (oneDNN's bf16 GEMM, or its emulation on float32 sgemm).
bool onednn_bf16_on() {
  if (!onednn_available()) return false;
  const AutocastState autocast = AutocastState::current();
  return autocast.cpu && autocast.cpu_dtype == at::kBFloat16;
}

// When ONEDNN_MAX_CPU_ISA caps this process below AVX-512 on an AVX-512 CPU, libtorch 1.13 still picks its oneDNN
// bf16 matmul and convolution by the CPU's own flags (mkldnn_bf16_device_check), and oneDNN, capped, then has no
// implementation ("could not create a primitive descriptor"): torch's oneDNN use goes off, as it is on such a CPU
// for bf16, so a capped run takes the paths an AVX2 machine takes. ATen's own vector kernels follow the cap too
// (ATEN_CPU_CAPABILITY, read at their first use) unless it is set. Done at load, before any torch op runs.
const bool torch_follows_cpu_cap = [] {
  const CpuIsa& isa = cpu_isa();
  if (!isa.capped()) return false;
  if (isa.level != CpuLevel::kAvx512 && isa.hardware_level == CpuLevel::kAvx512)
    at::globalContext().setUserEnabledMkldnn(false);
  if (isa.level != isa.hardware_level)
    setenv("ATEN_CPU_CAPABILITY", isa.level == CpuLevel::kAvx2 ? "avx2" : "default", /*overwrite=*/0);
  return true;
}();

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

// C[m, n] (row-major, float32, ldc = n) = op(A) op(B) on contiguous bf16 operands: oneDNN's bf16 GEMM, or sgemm
// on the widened operands (bf16_gemm_path). Should oneDNN refuse a call after all, this and every later one
// take the emulation: a user never meets oneDNN's status.
void gemm_bf16(char ta, char tb, int64_t m, int64_t n, int64_t k, const Tensor& a, const Tensor& b, float* c) {
  const int64_t lda = ta == 'N' ? k : m, ldb = tb == 'N' ? n : k;
  if (bf16_gemm_path().load() == Bf16Gemm::kOneDnn) {
    if (gemm_bf16_fn()(ta, tb, m, n, k, 1.0f, bf16_bits_of(a), lda, bf16_bits_of(b), ldb, 0.0f, c, n) == 0) return;
    bf16_gemm_path().store(Bf16Gemm::kEmulated);
  }
  const Tensor a32 = a.to(at::kFloat), b32 = b.to(at::kFloat);
  sgemm(ta, tb, m, n, k, 1.0f, a32.data_ptr<float>(), lda, b32.data_ptr<float>(), ldb, c);
}

// out[r, j] = bf16(acc[r, j] + bias[j]) for rows [r0, r1) of n columns; bias may be null.
BT_CPU_KERNEL(round_rows, (const float* acc, const float* bias, uint16_t* out, int64_t r0, int64_t r1, int64_t n),
              (acc, bias, out, r0, r1, n)) {
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
BT_CPU_KERNEL(add_rows, (const uint16_t* g, float* sums, int64_t m, int64_t n, int64_t j0, int64_t j1),
              (g, sums, m, n, j0, j1)) {
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

bool batched_shapes(const Tensor& a, const Tensor& b) {
  return a.dim() == 4 && b.dim() == 4 && a.size(0) == b.size(0) && a.size(1) == b.size(1);
}

bool batched_applies(const Tensor& a, const Tensor& b) {
  return onednn_on() && onednn_operand(a) && onednn_operand(b) && batched_shapes(a, b);
}

// Where bf16 GEMMs are emulated, bf16 batched products -- under CPU bf16 autocast (float32 or bf16 operands), or of
// two bf16 tensors -- run as bf16 roundings around the float32 ones (libtorch's bf16 bmm there is a scalar loop:
// bench_attention_probs took 18x as long with it under ONEDNN_MAX_CPU_ISA=AVX2; under a cap, oneDNN's refuses).
bool emulated_bf16_batched_applies(const Tensor& a, const Tensor& b) {
  if (!onednn_available() || bf16_gemm_path().load() != Bf16Gemm::kEmulated || !batched_shapes(a, b)) return false;
  const auto on_cpu = [](const Tensor& t) { return t.device().is_cpu() && t.numel() > 0; };
  const auto is = [](const Tensor& t, at::ScalarType type) { return t.scalar_type() == type; };
  if (!on_cpu(a) || !on_cpu(b)) return false;
  if (is(a, at::kBFloat16) && is(b, at::kBFloat16)) return true;
  const auto castable = [&](const Tensor& t) { return is(t, at::kFloat) || is(t, at::kBFloat16); };
  return onednn_bf16_on() && castable(a) && castable(b);
}

// The float32 batched product on oneDNN: operands read in place where their rows allow, an autograd function
// where a gradient is wanted.
Tensor float32_batched(const Tensor& a, const Tensor& b, bool transpose_b, double alpha) {
  TORCH_CHECK(a.size(3) == (transpose_b ? b.size(3) : b.size(2)), "batched_matmul: inner sizes differ: ",
              a.sizes(), " x ", b.sizes(), transpose_b ? "^T" : "");
  const Tensor a_ = in_place_or_copy(a), b_ = in_place_or_copy(b);
  const bool grad = torch::GradMode::is_enabled() && (a.requires_grad() || b.requires_grad());
  return grad ? OneDnnBatchedMatmulFn::apply(a_, b_, transpose_b, alpha)
              : product(a_, false, b_, transpose_b, static_cast<float>(alpha));
}

// The float32 Linear on oneDNN's sgemm (an autograd function where a gradient is wanted), x2 2-D.
Tensor float32_linear(const Tensor& x2, const Tensor& w, const Tensor& bias) {
  const bool grad = torch::GradMode::is_enabled() &&
                    (x2.requires_grad() || w.requires_grad() || (bias.defined() && bias.requires_grad()));
  // libtorch 1.13's autograd functions take no undefined inputs: no bias travels as an empty tensor.
  const Tensor b = bias.defined() ? bias : torch::empty({0}, w.options());
  const Tensor x = x2.contiguous(), wc = w.contiguous();
  return grad ? OneDnnLinearFn::apply(x, wc, b) : forward_2d(x, wc, bias);
}

}  // namespace

Tensor patch_embedding(const Tensor& x, const Tensor& w, int64_t patch) {
  const bool emulated = onednn_bf16_on() && bf16_gemm_path().load() == Bf16Gemm::kEmulated && x.device().is_cpu() &&
                        x.dim() == 4 && w.dim() == 4 && onednn_operand(w);
  if (!emulated) return torch::conv2d(x, w, {}, patch);
  // Non-overlapping patches: [B, C, H, W] -> [B, gh * gw, C * p * p] (the conv's remainder rows and columns dropped),
  // times w [h, C * p * p]^T, back to the conv's [B, h, gh, gw].
  const int64_t batch = x.size(0), channels = x.size(1), gh = x.size(2) / patch, gw = x.size(3) / patch;
  const Tensor patches = x.narrow(2, 0, gh * patch)
                             .narrow(3, 0, gw * patch)
                             .reshape({batch, channels, gh, patch, gw, patch})
                             .permute({0, 2, 4, 1, 3, 5})
                             .reshape({batch, gh * gw, channels * patch * patch});
  return linear(patches, w.reshape({w.size(0), -1}), Tensor()).transpose(1, 2).reshape({batch, w.size(0), gh, gw});
}

Tensor batched_matmul(const Tensor& a, const Tensor& b, bool transpose_b, double divide_by) {
  const double alpha = 1.0 / divide_by;  // exact for a power-of-two divisor (sqrt(64) = 8: every preset's heads)
  if (emulated_bf16_batched_applies(a, b)) {
    RECORD_FUNCTION("bt::batched_matmul (bf16 emulated)", std::vector<c10::IValue>{});
    return rounded_to_bf16(float32_batched(bf16_valued(a), bf16_valued(b), transpose_b, alpha));
  }
  if (!batched_applies(a, b)) {
    auto y = torch::matmul(a, transpose_b ? b.transpose(-1, -2) : b);
    return divide_by == 1.0 ? y : y / divide_by;
  }
  RECORD_FUNCTION("bt::batched_matmul (oneDNN)", std::vector<c10::IValue>{});  // a row in profiles (op_profile.py)
  return float32_batched(a, b, transpose_b, alpha);
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const bool bf16 = bf16_linear_applies(x, weight, bias);
  if (!bf16 && !linear_applies(x, weight, bias)) return torch::linear(x, weight, bias);
  const bool emulated = bf16 && bf16_gemm_path().load() == Bf16Gemm::kEmulated;
  RECORD_FUNCTION(emulated ? "bt::linear (bf16 emulated)" : bf16 ? "bt::linear (oneDNN bf16)" : "bt::linear (oneDNN)",
                  std::vector<c10::IValue>{});
  auto out_shape = x.sizes().vec();
  out_shape.back() = weight.size(0);
  const Tensor x2 = x.reshape({-1, x.size(-1)});
  Tensor y;
  if (emulated) {  // bf16(x W^T + b) on the bf16 values: rounded once, as oneDNN's bf16 path rounds
    y = rounded_to_bf16(float32_linear(bf16_valued(x2), bf16_valued(weight),
                                       bias.defined() ? bf16_valued(bias) : Tensor()));
  } else if (bf16) {  // the bf16 casts make x and W contiguous
    const bool grad = torch::GradMode::is_enabled() &&
                      (x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad()));
    const Tensor b = bias.defined() ? bias : torch::empty({0}, weight.options());
    y = grad ? OneDnnBf16LinearFn::apply(x2, weight, b)
             : forward_2d_bf16(to_bf16(x2), to_bf16(weight), bf16_rounded(b));
  } else {
    y = float32_linear(x2, weight, bias);
  }
  return y.view(out_shape);
}

std::string cpu_gemm_name() { return onednn_available() ? "onednn" : "torch"; }

std::string cpu_bf16_gemm_name() {
  if (!onednn_available()) return "torch";
  return bf16_gemm_path().load() == Bf16Gemm::kOneDnn ? "onednn_bf16" : "float32_emulated";
}

void set_cpu_bf16_gemm_emulated(bool emulated) {
  bf16_gemm_path().store(emulated || !onednn_bf16_gemm_works() ? Bf16Gemm::kEmulated : Bf16Gemm::kOneDnn);
}

}  // namespace bt::kernels
