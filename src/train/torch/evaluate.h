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

EvalResult evaluate(model::BridgeTowerForContrastiveLearning& model, loader::Loader& loader,
                    const text::Tokenizer& tok, int max_len, const torch::Device& device, bool bf16);

}  // namespace bt::train
