#include "eval/matching.h"

#include "common/error.h"

namespace bt::eval {

MatchingScores score_matching(const std::vector<float>& sim, int64_t n_text, int64_t n_image,
                              const std::vector<MatchingQuestion>& questions, std::vector<MatchingAnswer>* answers) {
  if (int64_t(sim.size()) != n_text * n_image)
    fail("score_matching: similarity matrix is ", sim.size(), " values, expected ", n_text, "x", n_image);
  MatchingScores s;
  if (answers) answers->clear();
  int64_t right = 0;
  double chance_sum = 0;
  for (const MatchingQuestion& q : questions) {
    if (q.image < 0 || q.image >= n_image) fail("score_matching: question names image ", q.image, " of ", n_image);
    if (q.label < 0 || size_t(q.label) >= q.choice_text.size())
      fail("score_matching: label ", q.label, " outside ", q.choice_text.size(), " choices");
    MatchingAnswer a;
    for (int64_t t : q.choice_text) {
      if (t < 0 || t >= n_text) fail("score_matching: choice names text ", t, " of ", n_text);
      a.scores.push_back(sim[size_t(t * n_image + q.image)]);
    }
    // The true choice wins only if it beats every other strictly; otherwise the best other is the prediction.
    a.predicted = q.label;
    for (size_t c = 0; c < a.scores.size(); ++c)
      if (int(c) != q.label && a.scores[c] >= a.scores[size_t(a.predicted)] &&
          (a.predicted == q.label || a.scores[c] > a.scores[size_t(a.predicted)]))
        a.predicted = int(c);
    right += a.predicted == q.label;
    chance_sum += 1.0 / double(a.scores.size());
    if (answers) answers->push_back(std::move(a));
  }
  s.count = int64_t(questions.size());
  s.accuracy = s.count ? double(right) / double(s.count) : 0.0;
  s.chance = s.count ? chance_sum / double(s.count) : 0.0;
  return s;
}

}  // namespace bt::eval
