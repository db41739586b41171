#include "model/attention_backend.h"

#include <cmath>
#include <utility>

namespace bt::model {

namespace {

bool at_least(const AttentionQuery& q, int major, int minor) {
  return q.torch_major > major || (q.torch_major == major && q.torch_minor >= minor);
}
bool half_type(AttentionDtype d) { return d == AttentionDtype::kBFloat16 || d == AttentionDtype::kFloat16; }
int sm(const AttentionQuery& q) { return q.sm_major * 10 + q.sm_minor; }

// What every fused CUDA kernel needs first.
std::string cuda_refusal(const AttentionQuery& q) {
  if (!at_least(q, 2, 0)) return "libtorch < 2.0 has no scaled_dot_product_attention";
  if (!q.cuda) return "needs a CUDA device";
  return "";
}

std::string flash_refusal(const AttentionQuery& q) {
  if (auto r = cuda_refusal(q); !r.empty()) return r;
  if (sm(q) < 80) return "needs sm80+";
  if (!half_type(q.dtype)) return "needs fp16/bf16";
  if (q.has_mask) return "takes no attention mask";
  const int max_dim = at_least(q, 2, 2) ? 256 : 128;  // FlashAttention-2 (torch 2.2) raised it from 128
  if (q.head_dim % 8 != 0 || q.head_dim > max_dim) return "needs head_dim % 8 == 0 and <= " + std::to_string(max_dim);
  return "";
}

std::string cudnn_refusal(const AttentionQuery& q) {
  if (auto r = cuda_refusal(q); !r.empty()) return r;
  // torch ships cuDNN attention from 2.3 and takes an additive mask in it from 2.5; it is the fastest masked
  // kernel on Hopper, and torch itself ranks it first only there.
  if (!at_least(q, 2, q.has_mask ? 5 : 3)) return q.has_mask ? "takes a mask from torch 2.5" : "needs torch >= 2.3";
  if (q.sm_major != 9) return "used on sm90 (Hopper) only";
  if (!half_type(q.dtype)) return "needs fp16/bf16";
  if (q.head_dim % 8 != 0 || q.head_dim > 128) return "needs head_dim % 8 == 0 and <= 128";
  if (q.dropout * 16.0 != std::floor(q.dropout * 16.0)) return "dropout must be a multiple of 1/16";
  return "";
}

std::string efficient_refusal(const AttentionQuery& q) {
  if (auto r = cuda_refusal(q); !r.empty()) return r;
  if (sm(q) < 50) return "needs sm50+";
  if (q.dtype == AttentionDtype::kOther) return "needs float32/fp16/bf16";
  // torch 2.0's kernel had neither masks nor dropout (2.1 added both).
  if (!at_least(q, 2, 1) && (q.has_mask || q.dropout > 0)) return "takes a mask and dropout from torch 2.1";
  if (q.head_dim % 8 != 0) return "needs head_dim % 8 == 0";
  return "";
}

// The fastest backend that accepts q, in auto's order.
AttentionBackend auto_choice(const AttentionQuery& q) {
  if (!at_least(q, 2, 0)) return AttentionBackend::kEager;
  // The CPU: torch's own choice (flash-CPU or math), as before this switch. CUDA with the capability unknown (a
  // build without BT_TORCH_CUDA cannot read it): torch's choice too, rather than guessing.
  if (!q.cuda || q.sm_major == 0) return AttentionBackend::kSdpa;
  const AttentionBackend order[] = {q.has_mask ? AttentionBackend::kCudnn : AttentionBackend::kFlash,
                                    AttentionBackend::kEfficient};
  for (AttentionBackend b : order)
    if (attention_refusal(b, q).empty()) return b;
  return AttentionBackend::kMath;
}

AttentionBackend backend_of(AttentionOverride o) {
  switch (o) {
    case AttentionOverride::kFlash: return AttentionBackend::kFlash;
    case AttentionOverride::kEfficient: return AttentionBackend::kEfficient;
    case AttentionOverride::kCudnn: return AttentionBackend::kCudnn;
    case AttentionOverride::kMath: return AttentionBackend::kMath;
    case AttentionOverride::kEager:
    case AttentionOverride::kAuto: break;
  }
  return AttentionBackend::kEager;
}

}  // namespace

std::string attention_refusal(AttentionBackend b, const AttentionQuery& q) {
  switch (b) {
    case AttentionBackend::kEager: return "";
    case AttentionBackend::kSdpa:
    case AttentionBackend::kMath: return at_least(q, 2, 0) ? "" : "libtorch < 2.0 has no scaled_dot_product_attention";
    case AttentionBackend::kFlash: return flash_refusal(q);
    case AttentionBackend::kCudnn: return cudnn_refusal(q);
    case AttentionBackend::kEfficient: return efficient_refusal(q);
  }
  return "unknown backend";
}

AttentionChoice choose_attention_backend(const AttentionQuery& q) {
  if (q.requested == AttentionOverride::kAuto) return {auto_choice(q), ""};
  if (q.requested == AttentionOverride::kEager) return {AttentionBackend::kEager, ""};
  const AttentionBackend want = backend_of(q.requested);
  const std::string why = attention_refusal(want, q);
  if (why.empty()) return {want, ""};
  const AttentionBackend got = auto_choice(q);
  return {got, std::string(attention_backend_name(want)) + " not used (" + why + "): " + attention_backend_name(got)};
}

const char* attention_backend_name(AttentionBackend b) {
  switch (b) {
    case AttentionBackend::kEager: return "eager";
    case AttentionBackend::kSdpa: return "sdpa";
    case AttentionBackend::kMath: return "math";
    case AttentionBackend::kFlash: return "flash";
    case AttentionBackend::kEfficient: return "efficient";
    case AttentionBackend::kCudnn: return "cudnn";
  }
  return "?";
}

namespace {
constexpr std::pair<const char*, AttentionOverride> kOverrideWords[] = {
    {"auto", AttentionOverride::kAuto},           {"flash", AttentionOverride::kFlash},
    {"efficient", AttentionOverride::kEfficient}, {"cudnn", AttentionOverride::kCudnn},
    {"math", AttentionOverride::kMath},           {"eager", AttentionOverride::kEager}};
}  // namespace

bool parse_attention_override(const std::string& word, AttentionOverride* out) {
  for (const auto& [w, o] : kOverrideWords)
    if (word == w) {
      *out = o;
      return true;
    }
  return false;
}

const char* attention_override_name(AttentionOverride o) {
  for (const auto& [w, v] : kOverrideWords)
    if (v == o) return w;
  return "?";
}

std::string TowerAttention::paths() const {
  std::string s = std::string("attention vision ") + attention_backend_name(vision.backend) + ", text " +
                  attention_backend_name(text.backend) + ", cross " + attention_backend_name(cross.backend);
  for (const AttentionChoice* c : {&vision, &text})  // cross repeats text's note
    if (!c->note.empty()) s += " (" + std::string(c == &vision ? "vision: " : "text: ") + c->note + ")";
  return s;
}

TowerAttention choose_tower_attention(AttentionQuery base, int vision_head_dim, int text_head_dim,
                                      double attention_dropout, bool training) {
  TowerAttention t;
  AttentionQuery v = base;
  v.has_mask = false, v.head_dim = vision_head_dim, v.dropout = 0;  // CLIP's vision attention has no dropout
  t.vision = choose_attention_backend(v);
  AttentionQuery x = base;
  x.has_mask = true, x.head_dim = text_head_dim, x.dropout = training ? attention_dropout : 0;
  t.text = t.cross = choose_attention_backend(x);
  return t;
}

}  // namespace bt::model
