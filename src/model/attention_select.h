// The torch side of model/attention_backend.h: the facts of this libtorch and device, the SDPA call with the
// chosen backend, and a run's record of its choices.
#pragma once
#include <torch/torch.h>

#include <string>

#include "model/attention_backend.h"
#include "model/config.h"

namespace bt::model {

// --attention_backend for this process, set by a run's setup before its first step and read by every attention
// call (process-wide like torch's own SDPA switches, which it drives; the run's record is per run: attention_paths).
void set_attention_override(AttentionOverride o);
AttentionOverride attention_override();

// The query for tensors of `dtype` on `device` under the process's override: this libtorch's version, the CUDA
// device's compute capability (0 where this build cannot read it). Mask, head_dim and dropout are the caller's.
AttentionQuery attention_query(const torch::Device& device, c10::ScalarType dtype);

// softmax(q k^T / sqrt(d) + mask) v through scaled_dot_product_attention with the backend choose_attention_backend
// picks for these tensors (only that one and math enabled while it runs; math catches a refusal the table did not
// foresee, said once on stderr). Undefined when the choice is eager, and always on libtorch < 2.0 (no SDPA).
// q [B, H, L, d], k and v [B, H, S, d], mask undefined or additive [B, 1, 1, S]; dropout applies when train.
torch::Tensor sdpa_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                             const torch::Tensor& mask, double dropout, bool train);

// A run's record (bench rows' and train_results.json's paths): "attention vision flash, text efficient, cross
// efficient" for a model of `cfg` on `device` computing in `compute` (bf16 / fp16 under autocast, else float32).
std::string attention_paths(const torch::Device& device, c10::ScalarType compute, const BridgeTowerConfig& cfg,
                            bool training);

}  // namespace bt::model
