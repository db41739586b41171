#include "feed/torch/batch_provider.h"

#include "common/error.h"
#include "feed/torch/batch_source.h"
#include "feed/torch/gpu_media.h"

namespace bt::feed {

void upload_captions(ModelBatch& m, const std::vector<std::string>& captions, const text::Tokenizer& tok, int max_len,
                     const torch::Device& device) {
  auto enc = tok.encode_batch(captions, max_len, text::Padding::kLongest, 1);
  auto ids = torch::from_blob(enc.input_ids.data(), {enc.batch, enc.length}, torch::kInt64);
  auto mask = torch::from_blob(enc.attention_mask.data(), {enc.batch, enc.length}, torch::kInt64);
  m.text_lengths.assign(size_t(enc.batch), 0);  // from the host mask: no read back from the device
  for (size_t r = 0; r < size_t(enc.batch); ++r)
    for (size_t t = 0; t < size_t(enc.length); ++t)
      m.text_lengths[r] += int32_t(enc.attention_mask[r * size_t(enc.length) + t] != 0);
  if (device.is_cpu()) {
    m.input_ids = ids.clone();  // out of `enc`, which goes at the end of this call
    m.attention_mask = mask.clone();
  } else {
    m.input_ids = ids.pin_memory().to(device, /*non_blocking=*/true);
    m.attention_mask = mask.pin_memory().to(device, true);
  }
}

ModelBatch to_model_batch(loader::BatchPtr b, const text::Tokenizer& tok, int max_len, const torch::Device& device) {
  ModelBatch m;
  const int64_t B = b->size, S = b->image_size;
  m.size = B;
  m.image_keys = b->image_keys;
  upload_captions(m, b->captions, tok, max_len, device);
  auto pixels = torch::from_blob(b->pixels.data(), {B, 3, S, S}, torch::kFloat32);
  if (device.is_cpu()) {
    m.pixels = pixels;
    m.host = std::move(b);
  } else {
    // Pinned staging, then an asynchronous copy; the loader's buffer can go back to its pool right away.
    m.pixels = pixels.pin_memory().to(device, /*non_blocking=*/true);
  }
  return m;
}

InMemoryBatches::InMemoryBatches(BatchProvider& from, size_t count) {
  from.start(0, 0, count);
  double w;
  while (auto mb = from.next(&w)) {
    mb->pixels = mb->pixels.clone();
    mb->host.reset();
    batches_.push_back(std::move(*mb));
  }
  from.stop();
}

std::optional<ModelBatch> InMemoryBatches::next(double* wait_s) {
  *wait_s = 0;
  if (batches_.empty()) return std::nullopt;
  const ModelBatch& b = batches_[next_++ % batches_.size()];
  ModelBatch m;  // shares the tensors; `host` stays empty (the pixels were copied out of the loader's buffer)
  m.pixels = b.pixels, m.input_ids = b.input_ids, m.attention_mask = b.attention_mask;
  m.image_keys = b.image_keys;
  m.size = b.size;
  m.text_lengths = b.text_lengths;
  return m;
}

std::unique_ptr<BatchProvider> make_batch_provider(loader::Loader& loader, const text::Tokenizer& tok,
                                                   const ProviderOptions& o, size_t batches_per_epoch) {
  if (o.media_pipeline) {
    if (o.in_memory_batches > 0) fail("--use_media_pipeline cannot be combined with in-memory batches");
    return std::make_unique<GpuMediaSource>(loader, tok, o.max_seq_length,
                                            GpuMediaOptions{o.image_size, o.bf16, o.device});
  }
  if (o.in_memory_batches > 0) {
    BatchSource pre(loader, tok, o.max_seq_length, o.device, /*background=*/false);
    return std::make_unique<InMemoryBatches>(pre, std::min<size_t>(batches_per_epoch, o.in_memory_batches));
  }
  return std::make_unique<BatchSource>(loader, tok, o.max_seq_length, o.device, o.background);
}

}  // namespace bt::feed
