#include "model/attention_select.h"

#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

#if defined(BT_TORCH_CUDA)
#include <ATen/cuda/CUDAContext.h>
#endif

namespace bt::model {

namespace {

std::atomic<AttentionOverride> g_override{AttentionOverride::kAuto};
// Backends (bit per AttentionBackend) whose kernel torch refused at run time in this process (check_choice_once).
std::atomic<unsigned> g_refused{0};

AttentionDtype dtype_of(c10::ScalarType t) {
  if (t == c10::kFloat) return AttentionDtype::kFloat32;
  if (t == c10::kBFloat16) return AttentionDtype::kBFloat16;
  if (t == c10::kHalf) return AttentionDtype::kFloat16;
  return AttentionDtype::kOther;
}

}  // namespace

void set_attention_override(AttentionOverride o) { g_override.store(o); }
AttentionOverride attention_override() { return g_override.load(); }

AttentionQuery attention_query(const torch::Device& device, c10::ScalarType dtype) {
  AttentionQuery q;
  q.cuda = device.is_cuda();
#if defined(BT_TORCH_CUDA)
  if (q.cuda) {
    const cudaDeviceProp* p = at::cuda::getDeviceProperties(device.has_index() ? device.index() : at::cuda::current_device());
    q.sm_major = p->major, q.sm_minor = p->minor;
  }
#endif
  q.torch_major = TORCH_VERSION_MAJOR, q.torch_minor = TORCH_VERSION_MINOR;
  q.dtype = dtype_of(dtype);
  q.requested = attention_override();
  return q;
}

std::string attention_paths(const torch::Device& device, c10::ScalarType compute, const BridgeTowerConfig& cfg,
                            bool training) {
  const AttentionQuery base = attention_query(device, compute);
  const int vision_head_dim = 64;  // CLIP's resblocks: hidden_size / 64 heads (modules.h ResidualAttention)
  const int text_head_dim = cfg.text.hidden_size / std::max(cfg.text.num_attention_heads, 1);
  std::string paths =
      choose_tower_attention(base, vision_head_dim, text_head_dim, cfg.text.attention_probs_dropout_prob, training)
          .paths();
  for (AttentionBackend b : {AttentionBackend::kFlash, AttentionBackend::kEfficient, AttentionBackend::kCudnn})
    if (g_refused.load() & (1u << static_cast<unsigned>(b)))
      paths += std::string(" (torch refused ") + attention_backend_name(b) + " at run time: its fallback ran)";
  return paths;
}

#if TORCH_VERSION_MAJOR >= 2
namespace {

#define BT_SDPA_CUDNN (TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 3)  // setSDPUseCuDNN

// For its lifetime: torch's SDPA switches allow only `b` and math (python's sdpa_kernel([b, MATH])); kSdpa leaves
// them as they are. Restored after: a run changes nothing for the code around it.
class SdpBackendScope {
 public:
  explicit SdpBackendScope(AttentionBackend b) : active_(b != AttentionBackend::kSdpa) {
    if (!active_) return;
    auto& c = at::globalContext();
    flash_ = c.userEnabledFlashSDP(), efficient_ = c.userEnabledMemEfficientSDP(), math_ = c.userEnabledMathSDP();
    c.setSDPUseFlash(b == AttentionBackend::kFlash);
    c.setSDPUseMemEfficient(b == AttentionBackend::kEfficient);
    c.setSDPUseMath(true);
#if BT_SDPA_CUDNN
    cudnn_ = c.userEnabledCuDNNSDP();
    c.setSDPUseCuDNN(b == AttentionBackend::kCudnn);
#endif
  }
  ~SdpBackendScope() {
    if (!active_) return;
    auto& c = at::globalContext();
    c.setSDPUseFlash(flash_), c.setSDPUseMemEfficient(efficient_), c.setSDPUseMath(math_);
#if BT_SDPA_CUDNN
    c.setSDPUseCuDNN(cudnn_);
#endif
  }
  SdpBackendScope(const SdpBackendScope&) = delete;
  SdpBackendScope& operator=(const SdpBackendScope&) = delete;

 private:
  bool active_, flash_ = true, efficient_ = true, math_ = true, cudnn_ = true;
};

// torch's SDPBackend numbering (sdp_utils): math 0, flash 1, efficient 2, cudnn 3.
int64_t sdp_code(AttentionBackend b) {
  return b == AttentionBackend::kFlash ? 1 : b == AttentionBackend::kEfficient ? 2 : b == AttentionBackend::kCudnn ? 3 : 0;
}

// Once per backend and process: does torch run the kernel chosen, or fall back to math (a refusal the choice
// table did not foresee)? One line on stderr when it falls back; the run still computes the same attention.
void check_choice_once(AttentionBackend b, const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       const c10::optional<torch::Tensor>& mask, double p) {
  static std::atomic<unsigned> checked{0};
  const unsigned bit = 1u << static_cast<unsigned>(b);
  if (b == AttentionBackend::kSdpa || b == AttentionBackend::kMath || (checked.fetch_or(bit) & bit)) return;
  const int64_t got = at::_fused_sdp_choice(q, k, v, mask, p, false);
  if (got == sdp_code(b)) return;
  g_refused.fetch_or(bit);
  std::fprintf(stderr, "attention: torch refused the %s kernel for these inputs: its SDPBackend %lld (0: math) "
               "runs instead\n", attention_backend_name(b), static_cast<long long>(got));
}

}  // namespace

torch::Tensor sdpa_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                             const torch::Tensor& mask, double dropout, bool train) {
  AttentionQuery a = attention_query(q.device(), q.scalar_type());
  a.has_mask = mask.defined();
  a.head_dim = static_cast<int>(q.size(-1));
  a.dropout = train ? dropout : 0.0;
  const AttentionBackend b = choose_attention_backend(a).backend;
  if (b == AttentionBackend::kEager) return {};
  SdpBackendScope scope(b);
  // An engaged optional holding an undefined tensor would count as "has a mask" (no flash kernel, and the math
  // fallback adds it): pass none when there is none.
  c10::optional<torch::Tensor> m;
  if (mask.defined()) m = mask.to(q.scalar_type());
  if (q.is_cuda()) check_choice_once(b, q, k, v, m, a.dropout);
  return at::scaled_dot_product_attention(q, k, v, m, a.dropout, false);
}
#else
torch::Tensor sdpa_attention(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                             double, bool) {
  return {};  // libtorch 1.13: no public scaled_dot_product_attention; the eager composite runs
}
#endif

}  // namespace bt::model
