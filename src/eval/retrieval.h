// Image-text retrieval recall@K from a similarity matrix, for eval of the contrastive model.
// Texts may share an image (the real data repeats each image across several rows): the gallery is the set of
// distinct images, text t belongs to image text_image[t].
//   text→image R@K: fraction of texts whose own image ranks in the top K images.
//   image→text R@K: fraction of images with at least one of their texts in the top K texts.
// Ties count against the query (a correct item ties with a wrong one → the wrong one ranks first), so a
// constant similarity never looks good. Median ranks are 1-based (1 = the correct item came first). R@1 by
// chance is 1 / the number of images (for image->text too when every image has as many texts).
#pragma once
#include <cstdint>
#include <vector>

namespace bt::eval {

struct RetrievalScores {
  double i2t_r1 = 0, i2t_r5 = 0, i2t_r10 = 0;
  double t2i_r1 = 0, t2i_r5 = 0, t2i_r10 = 0;
  double i2t_median_rank = 0, t2i_median_rank = 0;
  double r1_chance = 1;  // 1 / max(n_image, 1)
};

// sim: row-major [n_text x n_image]; text_image: size n_text, values in [0, n_image).
RetrievalScores retrieval_recall(const std::vector<float>& sim, int64_t n_text, int64_t n_image,
                                 const std::vector<int64_t>& text_image);

// Per text (`evaluate`'s predictions.jsonl): the 1-based rank of its own image (ties against it, as above) and the
// `top` best-scoring images, best first (ties: the lower index first).
struct TextRanking {
  int64_t rank = 0;
  std::vector<int64_t> top;
};
std::vector<TextRanking> text_rankings(const std::vector<float>& sim, int64_t n_text, int64_t n_image,
                                       const std::vector<int64_t>& text_image, int top = 5);

}  // namespace bt::eval
