// The attention backend choice (model/attention_backend.h) as a table: each row is one device/torch/dtype/mask/
// dropout/override situation and the backend it must get.
#include "model/attention_backend.h"

#include <gtest/gtest.h>

#include <string>

namespace bt::model {
namespace {

using B = AttentionBackend;
using O = AttentionOverride;
using D = AttentionDtype;

struct Row {
  const char* what;
  bool cuda;
  int sm;  // compute capability x10 (90: Hopper)
  int torch_major, torch_minor;
  D dtype;
  bool mask;
  int head_dim;
  double dropout;
  O requested;
  B expected;
  bool noted;  // an explicit choice that was refused says why
};

AttentionQuery query_of(const Row& r) {
  AttentionQuery q;
  q.cuda = r.cuda, q.sm_major = r.sm / 10, q.sm_minor = r.sm % 10;
  q.torch_major = r.torch_major, q.torch_minor = r.torch_minor;
  q.dtype = r.dtype, q.has_mask = r.mask, q.head_dim = r.head_dim, q.dropout = r.dropout, q.requested = r.requested;
  return q;
}

const Row kRows[] = {
    // libtorch 1.13 (this machine's): always the eager composite, whatever was asked.
    {"1.13 cpu", false, 0, 1, 13, D::kFloat32, true, 64, 0.1, O::kAuto, B::kEager, false},
    {"1.13 cuda bf16 vision", true, 90, 1, 13, D::kBFloat16, false, 64, 0, O::kAuto, B::kEager, false},
    {"1.13 flash asked", true, 90, 1, 13, D::kBFloat16, false, 64, 0, O::kFlash, B::kEager, true},
    // torch 2.x on the CPU: torch's own SDPA choice; eager on request.
    {"2.11 cpu", false, 0, 2, 11, D::kBFloat16, true, 64, 0.1, O::kAuto, B::kSdpa, false},
    {"2.11 cpu eager", false, 0, 2, 11, D::kBFloat16, true, 64, 0.1, O::kEager, B::kEager, false},
    {"2.11 cpu flash asked", false, 0, 2, 11, D::kBFloat16, false, 64, 0, O::kFlash, B::kSdpa, true},
    {"2.11 cpu math", false, 0, 2, 11, D::kFloat32, true, 64, 0, O::kMath, B::kMath, false},
    // H200 (sm90), torch 2.11, bf16: vision flash; text/cross cuDNN in eval, memory-efficient in training with
    // HF's dropout 0.1 (cuDNN takes multiples of 1/16 only), cuDNN again with --dropout 0.
    {"h200 vision bf16", true, 90, 2, 11, D::kBFloat16, false, 64, 0, O::kAuto, B::kFlash, false},
    {"h200 vision bf16 train", true, 90, 2, 11, D::kBFloat16, false, 64, 0.1, O::kAuto, B::kFlash, false},
    {"h200 text bf16 eval", true, 90, 2, 11, D::kBFloat16, true, 64, 0, O::kAuto, B::kCudnn, false},
    {"h200 text bf16 dropout 0.1", true, 90, 2, 11, D::kBFloat16, true, 64, 0.1, O::kAuto, B::kEfficient, false},
    {"h200 text bf16 dropout 1/8", true, 90, 2, 11, D::kBFloat16, true, 64, 0.125, O::kAuto, B::kCudnn, false},
    {"h200 text fp16", true, 90, 2, 11, D::kFloat16, true, 64, 0, O::kAuto, B::kCudnn, false},
    // fp32 on the GPU: no flash, no cuDNN; the memory-efficient kernel takes float32.
    {"h200 vision fp32", true, 90, 2, 11, D::kFloat32, false, 64, 0, O::kAuto, B::kEfficient, false},
    {"h200 text fp32", true, 90, 2, 11, D::kFloat32, true, 64, 0.1, O::kAuto, B::kEfficient, false},
    // Ampere (sm80): flash for vision; no cuDNN (Hopper only here): memory-efficient for the masked towers.
    {"a100 vision", true, 80, 2, 11, D::kBFloat16, false, 64, 0, O::kAuto, B::kFlash, false},
    {"a100 text", true, 80, 2, 11, D::kBFloat16, true, 64, 0, O::kAuto, B::kEfficient, false},
    {"a100 cudnn asked", true, 80, 2, 11, D::kBFloat16, true, 64, 0, O::kCudnn, B::kEfficient, true},
    // Turing (sm75): no flash; memory-efficient.
    {"t4 vision fp16", true, 75, 2, 11, D::kFloat16, false, 64, 0, O::kAuto, B::kEfficient, false},
    // Older torch 2.x: no masked cuDNN before 2.5; no mask/dropout in the efficient kernel of 2.0.
    {"2.4 h100 text", true, 90, 2, 4, D::kBFloat16, true, 64, 0, O::kAuto, B::kEfficient, false},
    {"2.0 h100 text", true, 90, 2, 0, D::kBFloat16, true, 64, 0, O::kAuto, B::kMath, false},
    {"2.0 h100 vision", true, 90, 2, 0, D::kBFloat16, false, 64, 0, O::kAuto, B::kFlash, false},
    // Head dims the fused kernels refuse.
    {"head_dim 60", true, 90, 2, 11, D::kBFloat16, false, 60, 0, O::kAuto, B::kMath, false},
    {"head_dim 192 masked", true, 90, 2, 11, D::kBFloat16, true, 192, 0, O::kAuto, B::kEfficient, false},
    {"head_dim 192 flash 2.1", true, 90, 2, 1, D::kBFloat16, false, 192, 0, O::kAuto, B::kEfficient, false},
    // Explicit choices: taken when the inputs allow, else auto's choice with the reason.
    {"flash asked, mask", true, 90, 2, 11, D::kBFloat16, true, 64, 0, O::kFlash, B::kCudnn, true},
    {"efficient asked", true, 90, 2, 11, D::kBFloat16, false, 64, 0, O::kEfficient, B::kEfficient, false},
    {"math asked", true, 90, 2, 11, D::kBFloat16, true, 64, 0.1, O::kMath, B::kMath, false},
    {"eager asked on cuda", true, 90, 2, 11, D::kBFloat16, true, 64, 0.1, O::kEager, B::kEager, false},
    {"cudnn asked, dropout 0.1", true, 90, 2, 11, D::kBFloat16, true, 64, 0.1, O::kCudnn, B::kEfficient, true},
    // A CUDA build that cannot read the capability: torch decides.
    {"cuda, capability unknown", true, 0, 2, 11, D::kBFloat16, false, 64, 0, O::kAuto, B::kSdpa, false},
};

TEST(AttentionBackend, ChoiceTable) {
  for (const Row& r : kRows) {
    const AttentionChoice c = choose_attention_backend(query_of(r));
    EXPECT_EQ(attention_backend_name(c.backend), std::string(attention_backend_name(r.expected))) << r.what;
    EXPECT_EQ(!c.note.empty(), r.noted) << r.what << ": note '" << c.note << "'";
  }
}

TEST(AttentionBackend, RefusedChoiceNamesWhy) {
  AttentionQuery q;
  q.cuda = true, q.sm_major = 9, q.torch_major = 2, q.torch_minor = 11, q.dtype = D::kBFloat16;
  q.has_mask = true, q.requested = O::kFlash;
  EXPECT_EQ(choose_attention_backend(q).note, "flash not used (takes no attention mask): cudnn");
  EXPECT_EQ(attention_refusal(B::kCudnn, [&] { auto d = q; d.dropout = 0.1; return d; }()),
            "dropout must be a multiple of 1/16");
}

// The run's record: one backend per tower, as bench rows and train_results.json carry it.
TEST(AttentionBackend, TowerPaths) {
  AttentionQuery h200;
  h200.cuda = true, h200.sm_major = 9, h200.torch_major = 2, h200.torch_minor = 11, h200.dtype = D::kBFloat16;
  EXPECT_EQ(choose_tower_attention(h200, 64, 64, 0.1, true).paths(),
            "attention vision flash, text efficient, cross efficient");
  EXPECT_EQ(choose_tower_attention(h200, 64, 64, 0.0, true).paths(), "attention vision flash, text cudnn, cross cudnn");
  AttentionQuery cpu113;
  EXPECT_EQ(choose_tower_attention(cpu113, 64, 64, 0.1, true).paths(), "attention vision eager, text eager, cross eager");
  h200.requested = O::kCudnn;
  EXPECT_EQ(choose_tower_attention(h200, 64, 64, 0.1, true).paths(),
            "attention vision cudnn, text efficient, cross efficient (text: cudnn not used (dropout must be a "
            "multiple of 1/16): efficient)");
}

TEST(AttentionBackend, OverrideWords) {
  for (const char* w : {"auto", "flash", "efficient", "cudnn", "math", "eager"}) {
    AttentionOverride o{};
    ASSERT_TRUE(parse_attention_override(w, &o)) << w;
    EXPECT_EQ(attention_override_name(o), std::string(w));
  }
  AttentionOverride o = O::kAuto;
  EXPECT_FALSE(parse_attention_override("fast", &o));
  EXPECT_FALSE(parse_attention_override("", &o));
}

}  // namespace
}  // namespace bt::model
