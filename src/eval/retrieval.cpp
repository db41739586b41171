#include "eval/retrieval.h"

#include <algorithm>
#include <limits>

#include "common/error.h"

namespace bt::eval {

namespace {
// Median of 1-based ranks (the mean of the two middle ones for an even count).
double median_rank(std::vector<int64_t> ranks) {
  if (ranks.empty()) return 0;
  std::sort(ranks.begin(), ranks.end());
  const size_t n = ranks.size();
  return n % 2 ? double(ranks[n / 2] + 1) : (double(ranks[n / 2 - 1]) + double(ranks[n / 2])) / 2.0 + 1.0;
}
}  // namespace

RetrievalScores retrieval_recall(const std::vector<float>& sim, int64_t n_text, int64_t n_image,
                                 const std::vector<int64_t>& text_image) {
  if (static_cast<int64_t>(sim.size()) != n_text * n_image || static_cast<int64_t>(text_image.size()) != n_text)
    fail("retrieval_recall: similarity matrix is ", sim.size(), " values, expected ", n_text, "x", n_image);
  RetrievalScores r;
  r.r1_chance = 1.0 / static_cast<double>(std::max<int64_t>(n_image, 1));
  if (n_text == 0 || n_image == 0) return r;
  auto at = [&](int64_t t, int64_t i) { return sim[t * n_image + i]; };
  std::vector<int64_t> t2i_ranks, i2t_ranks;
  // text → image: rank = number of other images scoring >= the correct one.
  for (int64_t t = 0; t < n_text; ++t) {
    const int64_t gt = text_image[t];
    if (gt < 0 || gt >= n_image) fail("retrieval_recall: text ", t, " names image ", gt, " of ", n_image);
    const float s = at(t, gt);
    int64_t rank = 0;
    for (int64_t i = 0; i < n_image; ++i)
      if (i != gt && at(t, i) >= s) ++rank;
    r.t2i_r1 += rank < 1, r.t2i_r5 += rank < 5, r.t2i_r10 += rank < 10;
    t2i_ranks.push_back(rank);
  }
  // image → text: the best-ranked correct text decides.
  int64_t images_with_text = 0;
  for (int64_t i = 0; i < n_image; ++i) {
    float best = -std::numeric_limits<float>::infinity();
    bool any = false;
    for (int64_t t = 0; t < n_text; ++t)
      if (text_image[t] == i) best = std::max(best, at(t, i)), any = true;
    if (!any) continue;
    ++images_with_text;
    int64_t rank = 0;
    for (int64_t t = 0; t < n_text; ++t)
      if (text_image[t] != i && at(t, i) >= best) ++rank;
    r.i2t_r1 += rank < 1, r.i2t_r5 += rank < 5, r.i2t_r10 += rank < 10;
    i2t_ranks.push_back(rank);
  }
  const double nt = static_cast<double>(n_text), ni = static_cast<double>(std::max<int64_t>(1, images_with_text));
  r.t2i_r1 /= nt, r.t2i_r5 /= nt, r.t2i_r10 /= nt;
  r.i2t_r1 /= ni, r.i2t_r5 /= ni, r.i2t_r10 /= ni;
  r.t2i_median_rank = median_rank(std::move(t2i_ranks));
  r.i2t_median_rank = median_rank(std::move(i2t_ranks));
  return r;
}

std::vector<TextRanking> text_rankings(const std::vector<float>& sim, int64_t n_text, int64_t n_image,
                                       const std::vector<int64_t>& text_image, int top) {
  if (static_cast<int64_t>(sim.size()) != n_text * n_image || static_cast<int64_t>(text_image.size()) != n_text)
    fail("text_rankings: similarity matrix is ", sim.size(), " values, expected ", n_text, "x", n_image);
  std::vector<TextRanking> out(static_cast<size_t>(n_text));
  std::vector<int64_t> order(static_cast<size_t>(n_image));
  const size_t k = static_cast<size_t>(std::min<int64_t>(top, n_image));
  for (int64_t t = 0; t < n_text; ++t) {
    const float* row = sim.data() + t * n_image;
    const int64_t gt = text_image[t];
    if (gt < 0 || gt >= n_image) fail("text_rankings: text ", t, " names image ", gt, " of ", n_image);
    TextRanking& r = out[static_cast<size_t>(t)];
    r.rank = 1;
    for (int64_t i = 0; i < n_image; ++i)
      if (i != gt && row[i] >= row[gt]) ++r.rank;
    for (int64_t i = 0; i < n_image; ++i) order[static_cast<size_t>(i)] = i;
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [row](int64_t a, int64_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    r.top.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return out;
}

}  // namespace bt::eval
