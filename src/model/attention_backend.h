// Which kernel computes softmax(q k^T / sqrt(d) + mask) v, decided once per tower by a pure function of the facts
// the kernels' own checks read (torch-free: the table test runs on any machine, and the GPU run's choice can be
// predicted from here). The kernels are torch's scaled_dot_product_attention (SDPA) backends:
//   flash      FlashAttention-2: CUDA sm80+, fp16/bf16, no mask (the vision tower), head_dim % 8 == 0, <= 256
//   cudnn      cuDNN's fused attention: sm90 (torch prioritises it on Hopper), torch >= 2.5 (masks), fp16/bf16,
//              head_dim % 8 == 0, <= 128, and a dropout that is a multiple of 1/16 (so HF's 0.1 in training is not)
//   efficient  the memory-efficient kernel (xFormers'): CUDA sm50+, float/fp16/bf16, an additive mask from torch 2.1
//   math       SDPA's composite reference (any device, any dtype)
//   eager      bridgetune's own composite (kernels/attention_probs/attention_probs.h): libtorch 1.13 has no public SDPA, so there it
//              is the only choice; on the CPU it keeps the custom dropout mask (kernels/dropout/dropout.h) bit for bit
//   sdpa       SDPA with torch's own choice: the CPU on torch >= 2 (flash-CPU or math), as before this switch
// Dropout: every SDPA backend draws its own mask (torch's Philox on CUDA), so CUDA runs with dropout > 0 are not
// bit-identical to CPU runs (which use the hash mask of kernels/dropout/dropout.h); with --dropout 0 only rounding differs.
// --attention_backend auto picks the fastest that accepts the inputs; an explicit choice the inputs rule out falls
// back along auto's order, and the reason is kept (AttentionChoice::note) so the run can say so.
#pragma once
#include <string>

namespace bt::model {

enum class AttentionBackend { kEager, kSdpa, kMath, kFlash, kEfficient, kCudnn };
// --attention_backend: auto or one backend.
enum class AttentionOverride { kAuto, kFlash, kEfficient, kCudnn, kMath, kEager };
enum class AttentionDtype { kFloat32, kBFloat16, kFloat16, kOther };

struct AttentionQuery {
  bool cuda = false;
  int sm_major = 0, sm_minor = 0;        // the CUDA device's compute capability (ignored on the CPU)
  int torch_major = 1, torch_minor = 13;  // the libtorch compiled against (TORCH_VERSION_MAJOR/MINOR)
  AttentionDtype dtype = AttentionDtype::kFloat32;  // of q (bf16 under bf16 autocast, fp16 with --fp16 on CUDA)
  bool has_mask = false;                            // an additive mask (text, cross-modal); vision has none
  int head_dim = 64;
  double dropout = 0;  // the probability applied in this call (0 in eval mode)
  AttentionOverride requested = AttentionOverride::kAuto;
};

struct AttentionChoice {
  AttentionBackend backend = AttentionBackend::kEager;
  std::string note;  // why an explicit --attention_backend was not taken; empty when it was (or auto)
};

AttentionChoice choose_attention_backend(const AttentionQuery& q);
// Each backend's test alone: "" when it accepts the query, else why not (one phrase).
std::string attention_refusal(AttentionBackend b, const AttentionQuery& q);

const char* attention_backend_name(AttentionBackend b);  // "eager", "sdpa", "math", "flash", "efficient", "cudnn"
inline constexpr const char* kAttentionOverrideWords = "auto|flash|efficient|cudnn|math|eager";
// Parses the flag's word; false on anything else.
bool parse_attention_override(const std::string& word, AttentionOverride* out);
const char* attention_override_name(AttentionOverride o);

// The backends of one run, per tower (vision: no mask, no dropout; text and cross-modal: a mask and the config's
// attention dropout in training), as the run's `paths` record them: "attention vision flash, text cudnn, cross
// cudnn". Text and cross-modal get the same inputs, so the same backend; both are named for the record.
struct TowerAttention {
  AttentionChoice vision, text, cross;
  std::string paths() const;
};
TowerAttention choose_tower_attention(AttentionQuery base, int vision_head_dim, int text_head_dim,
                                      double attention_dropout, bool training);

}  // namespace bt::model
