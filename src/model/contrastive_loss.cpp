#include "model/contrastive_loss.h"

#include <ATen/ATen.h>

#include "kernels/autocast.h"

namespace bt::model {

namespace {
// Autocast off for its lifetime, then the caller's state again.
struct AutocastPause {
  kernels::AutocastState saved = kernels::AutocastState::current();
  AutocastPause() { kernels::AutocastState{false, false, saved.cpu_dtype, saved.cuda_dtype}.apply(); }
  ~AutocastPause() { saved.apply(); }
};
}  // namespace

at::Tensor contrastive_ce(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale, double label_smoothing) {
  // The N x N similarities in fp32 even under bf16/fp16 autocast: bf16's 8 mantissa bits would quantise a
  // logit of about 14-100 (a cosine times exp(logit_scale)) to steps of 0.06-0.5 before the softmax.
  const AutocastPause fp32;
  const at::Tensor labels = at::arange(a.size(0), at::TensorOptions().dtype(at::kLong).device(a.device()));
  return at::cross_entropy_loss(at::matmul(a.to(at::kFloat), b.to(at::kFloat).t()) * scale.to(at::kFloat), labels,
                                /*weight=*/{}, at::Reduction::Mean, /*ignore_index=*/-100, label_smoothing);
}

at::Tensor contrastive_loss(const at::Tensor& text, const at::Tensor& image, const at::Tensor& cross,
                            const at::Tensor& logit_scale, double label_smoothing) {
  // exp once for the three terms (as HF does): logit_scale's gradient is then summed before the exp's backward.
  const at::Tensor scale = logit_scale.exp();
  return (contrastive_ce(text, image, scale, label_smoothing) + contrastive_ce(text, cross, scale, label_smoothing) +
          contrastive_ce(image, cross, scale, label_smoothing)) /
         3.0;
}

}  // namespace bt::model
