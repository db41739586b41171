// The contest's matching task scored from embeddings: each row picks, among its caption choices, the one whose
// text embedding is most similar to the image's (the contrastive logits' argmax; logit_scale does not change
// it). Ties count against the row (the true choice must beat every other), so constant scores score 0. The accuracy
// of guessing is the mean of 1 / choices over the questions.
#pragma once
#include <cstdint>
#include <vector>

namespace bt::eval {

struct MatchingQuestion {
  int64_t image = -1;                // row of the image embedding matrix
  std::vector<int64_t> choice_text;  // rows of the text embedding matrix, one per choice
  int label = 0;                     // index into choice_text
};

struct MatchingAnswer {
  int predicted = -1;
  std::vector<float> scores;  // one per choice
};

struct MatchingScores {
  double accuracy = 0;
  double chance = 0;  // 0 without questions
  int64_t count = 0;
};

// sim: row-major [n_text x n_image] cosine similarities. Fills answers (one per question) and returns the score.
MatchingScores score_matching(const std::vector<float>& sim, int64_t n_text, int64_t n_image,
                              const std::vector<MatchingQuestion>& questions, std::vector<MatchingAnswer>* answers);

}  // namespace bt::eval
