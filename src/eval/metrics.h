// What an evaluation found, and its metric names, in one place: the trainer's run log (metrics.jsonl, TensorBoard,
// model selection), the recipe's eval/test_results.json and `bridgetune evaluate`'s eval_results.json all take
// their keys from the to_json() below, with HF's metric_key_prefix ("eval", "test"):
//   to_json(RetrievalScores, p)  p_i2t_r1 p_i2t_r5 p_i2t_r10 p_t2i_r1 p_t2i_r5 p_t2i_r10
//   to_json(MatchingScores, p)   p_matching_accuracy p_matching_chance
//   to_json(SplitEval, p)        p_loss p_samples, the recall keys, and the matching keys when the split has them
// Torch-free: the embedding evaluations that fill these structs are eval/torch/embed_eval.h.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "eval/matching.h"
#include "eval/retrieval.h"

namespace bt::eval {

struct RetrievalEval {
  RetrievalScores scores;
  int64_t pairs = 0, images = 0, texts = 0, skipped = 0;  // pairs scored, the gallery, distinct captions, rows left out
  double seconds = 0;
  // With the full forward (evaluate_retrieval_with_loss): the contrastive loss as training computes it (each
  // batch its own negatives), averaged over the samples of the batches of 2 rows or more, and the batches read.
  double loss = 0;
  int64_t loss_samples = 0, batches = 0;
  // Per scored row (`evaluate`'s predictions.jsonl): its dataset row, its image's rank among the gallery and the
  // dataset rows of the best-scoring images (each image's first row), best first.
  struct Prediction {
    size_t row = 0;
    int64_t rank = 0;
    std::vector<size_t> top_rows;
  };
  std::vector<Prediction> predictions;
};

struct MatchingEval {
  MatchingScores scores;
  std::vector<MatchingAnswer> answers;  // per kept question, in order
  std::vector<size_t> rows;             // the MatchingSet row of each answer
  int64_t images = 0, texts = 0, skipped = 0;
  double seconds = 0;
};

// One evaluation of a validation or test split, during training or after it: retrieval with the loss, and the
// contest's matching task when the split has its questions.
struct SplitEval {
  RetrievalEval retrieval;
  std::optional<MatchingEval> matching;
  double seconds = 0;  // the whole evaluation
};

nlohmann::json to_json(const RetrievalScores& s, const std::string& prefix);
nlohmann::json to_json(const MatchingScores& s, const std::string& prefix);
nlohmann::json to_json(const SplitEval& e, const std::string& prefix);

// The metrics model selection may choose from (--metric_for_best_model) in the trainer's evaluations: loss, the
// recall keys, and with matching questions the matching keys, all with the "eval" prefix.
std::vector<std::string> eval_metric_keys(bool with_matching);

}  // namespace bt::eval
