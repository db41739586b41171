// Eval of the contrastive model on a validation loader: mean contrastive loss (per-batch negatives, as in
// training) and image↔text retrieval recall@1/5/10 over the whole split (distinct images as the gallery).
#pragma once
#include <torch/torch.h>

#include "loader/loader.h"
#include "model/bridgetower.h"
#include "text/tokenizer.h"
#include "train/retrieval.h"

namespace bt::train {

struct EvalResult {
  double loss = 0;
  int64_t samples = 0;
  int64_t images = 0;
  RetrievalScores recall;
};

// Switches autocast to bf16 (or `dtype`: fp16 for --fp16 on CUDA) on the device type of `device` for its lifetime
// when `enabled`.
class Bf16Autocast {
 public:
  Bf16Autocast(bool enabled, const torch::Device& device, at::ScalarType dtype = at::kBFloat16);
  ~Bf16Autocast();

 private:
  bool on_, cuda_;
};

EvalResult evaluate(model::BridgeTowerForContrastiveLearning& model, loader::Loader& loader,
                    const text::Tokenizer& tok, int max_len, const torch::Device& device, bool bf16);

}  // namespace bt::train
