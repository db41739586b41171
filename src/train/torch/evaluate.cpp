#include "train/torch/evaluate.h"

#include <unordered_map>

#include "model/autocast.h"
#include "train/torch/batch_source.h"

namespace bt::train {

EvalResult evaluate(model::BridgeTowerForContrastiveLearning& model, loader::Loader& loader,
                    const text::Tokenizer& tok, int max_len, const torch::Device& device, bool bf16) {
  EvalResult r;
  const bool was_training = model->is_training();
  model->eval();
  torch::NoGradGuard no_grad;
  BatchSource src(loader, tok, max_len, device, /*background=*/false);
  src.start(0, 0, loader.batches_per_epoch());
  std::vector<torch::Tensor> text_embeds, image_embeds;
  std::vector<int64_t> text_image;
  std::unordered_map<std::string, int64_t> image_index;
  double loss_sum = 0, wait = 0;
  while (auto mb = src.next(&wait)) {
    if (mb->size < 2) continue;  // a contrastive loss needs negatives
    model::ContrastiveOutput out;
    {
      model::AutocastScope ac(bf16, device);
      out = model->forward(mb->pixels, mb->input_ids, mb->attention_mask, true);
    }
    loss_sum += out.loss.item<double>() * static_cast<double>(mb->size);
    r.samples += mb->size;
    text_embeds.push_back(out.text_embeds.to(torch::kCPU, torch::kFloat32));
    auto img = out.image_embeds.to(torch::kCPU, torch::kFloat32);
    for (int64_t i = 0; i < mb->size; ++i) {
      auto [it, fresh] = image_index.emplace(mb->image_keys[i], static_cast<int64_t>(image_index.size()));
      if (fresh) image_embeds.push_back(img[i]);
      text_image.push_back(it->second);
    }
  }
  if (was_training) model->train();
  if (r.samples == 0) return r;
  r.loss = loss_sum / static_cast<double>(r.samples);
  r.images = static_cast<int64_t>(image_embeds.size());
  auto t = torch::cat(text_embeds), i = torch::stack(image_embeds);
  auto sim = torch::matmul(t, i.t()).contiguous();
  std::vector<float> s(sim.data_ptr<float>(), sim.data_ptr<float>() + sim.numel());
  r.recall = retrieval_recall(s, t.size(0), i.size(0), text_image);
  return r;
}

}  // namespace bt::train
