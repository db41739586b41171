// The work of BridgeTowerForContrastiveLearning counted from its config and a batch's shapes (torch-free): the
// model FLOPs that MFU divides by, HF Trainer's `total_flos`, and the parameter counts HF reports.
//
// Convention (torch's profiler, HF, PaLM's MFU): a product of [M, K] and [K, N] is 2*M*N*K FLOPs; only matrix
// products are counted (Linear layers, attention's q k^T and p v at 2*Lq*Lk*d each, the patch embedding as the
// [patches, C*p*p] x [C*p*p, H] product it is, the loss's B x B similarities); LayerNorm, softmax, GELU, dropout,
// residual adds and the optimizer are left out (under 1 % of the large preset's products). A training step is 3x
// its forward (backward = 2x forward); recomputation (gradient checkpointing, exact accumulation's second forward)
// is not counted: these are model FLOPs, not hardware FLOPs. The structure is bridgetune's forward
// (model/bridgetower.cpp): the vision tower runs text_config.num_hidden_layers blocks at grid^2 + 1 tokens; the text
// tower at the padded text length; each of the num_hidden_layers cross-modal steps transforms every token of both
// towers and runs a text layer (self-attention over the text, cross-attention onto the image, FFN) and an image
// layer (the reverse); the poolers and heads act on one token per sample. HF's contrastive head differs in one
// place: it applies cross_modal_image_transform to every image token where bridgetune slices the class token first
// (hf_extra_head_flops). Checked against torch's profiler on HF's model: tests/model/flops_test.cpp.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "model/config.h"

namespace bt::model {

// Forward FLOPs twice over: by the op class torch's profiler counts them under, and by the part of the model.
struct ForwardFlops {
  double patch = 0;      // patch embedding (aten::conv2d)
  double linear = 0;     // Linear layers (aten::addmm / aten::mm)
  double attention = 0;  // q k^T and p v (aten::bmm)
  double loss = 0;       // the three B x B similarity products of the contrastive loss (aten::mm)
  double vision = 0, text = 0, cross_modal = 0, heads = 0;  // heads: poolers, itc heads, the loss
  double total() const { return patch + linear + attention + loss; }
};

int64_t image_tokens(const BridgeTowerConfig& c);  // (image_size / patch_size)^2 + the class token

// One sample's forward with `text_len` text tokens (padded or real: a pad token costs what a real one does), no
// loss term (it depends on the batch).
ForwardFlops sample_forward_flops(const BridgeTowerConfig& c, int64_t text_len);
// A batch's forward: batch x sample_forward_flops + the loss over `batch` rows.
ForwardFlops forward_flops(const BridgeTowerConfig& c, int64_t batch, int64_t text_len);
// What HF's BridgeTowerForContrastiveLearning adds per sample (forward): the image transform of the non-class tokens.
double hf_extra_head_flops(const BridgeTowerConfig& c);

inline constexpr double kTrainFlopsPerForward = 3;  // forward + backward (2x forward)

// Training work of micro-batches (forward + backward), summed with +=.
struct StepFlops {
  double model = 0;        // 3 x forward at the padded shapes: what the steps computed (MFU's numerator)
  double padding = 0;      // of `model`, the part spent on pad tokens (vs every row run at its real length)
  double text_tokens = 0;  // rows x padded length: the input_ids HF Trainer counts in total_flos
  double samples = 0;
  StepFlops& operator+=(const StepFlops& o);
};
// One micro-batch: `real_lengths` holds each row's real tokens (<= padded_len); its size is the batch.
StepFlops train_flops(const BridgeTowerConfig& c, int64_t padded_len, const std::vector<int32_t>& real_lengths);

// HF's model.num_parameters() of BridgeTowerForContrastiveLearning, and the nn.Embedding weights among them (what
// num_parameters(exclude_embeddings=True) leaves out).
struct ParameterCounts {
  int64_t total = 0, embedding = 0;
};
ParameterCounts contrastive_parameter_counts(const BridgeTowerConfig& c);
// HF Trainer's total_flos for `text_tokens` input_ids: PreTrainedModel.floating_point_ops = 6 x non-embedding
// parameters x input_ids.numel() (main_input_name; BridgeTower's image tokens are not in it).
double hf_total_flos(const BridgeTowerConfig& c, double text_tokens);

// The counted keys of train_results.json and bench rows for the work `all` (every rank's): total_flos (HF's meaning,
// hf_total_flos: comparable with HF runs' figure, though it leaves out the image tokens), model_flops (this file's
// count), model_flops_per_sample, padding_flops_percent (of model_flops) and text_tokens_per_sample (padded).
nlohmann::json work_json(const BridgeTowerConfig& c, const StepFlops& all);

}  // namespace bt::model
