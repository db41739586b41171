#include "model/contrastive_loss.h"

#include <ATen/ATen.h>

namespace bt::model {

at::Tensor contrastive_ce(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale) {
  const at::Tensor labels = at::arange(a.size(0), at::TensorOptions().dtype(at::kLong).device(a.device()));
  return at::cross_entropy_loss(at::matmul(a, b.t()) * scale, labels);
}

at::Tensor contrastive_loss(const at::Tensor& text, const at::Tensor& image, const at::Tensor& cross,
                            const at::Tensor& logit_scale) {
  // exp once for the three terms (as HF does): logit_scale's gradient is then summed before the exp's backward.
  const at::Tensor scale = logit_scale.exp();
  return (contrastive_ce(text, image, scale) + contrastive_ce(text, cross, scale) + contrastive_ce(image, cross, scale)) /
         3.0;
}

}  // namespace bt::model
