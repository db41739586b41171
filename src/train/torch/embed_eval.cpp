#include "train/torch/embed_eval.h"

#include <chrono>
#include <functional>
#include <unordered_map>

#include "common/error.h"
#include "data/captions_dataset.h"
#include "model/autocast.h"
#include "source/source.h"

namespace bt::train {

namespace {

using Clock = std::chrono::steady_clock;

// A view of some rows of another dataset (one per distinct image), so the loader reads each image once.
class RowsView : public data::Dataset {
 public:
  RowsView(std::shared_ptr<const data::Dataset> base, std::vector<size_t> rows)
      : base_(std::move(base)), rows_(std::move(rows)) {}
  size_t size() const override { return rows_.size(); }
  const std::string& caption(size_t i) const override { return base_->caption(rows_[i]); }
  const std::string& image_key(size_t i) const override { return base_->image_key(rows_[i]); }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override { base_->read_image(rows_[i], bytes); }
  std::string describe(size_t i) const override { return base_->describe(rows_[i]); }
  bool is_bad(size_t i) const override { return base_->is_bad(rows_[i]); }
  std::string bad_reason(size_t i) const override { return base_->bad_reason(rows_[i]); }

 private:
  std::shared_ptr<const data::Dataset> base_;
  std::vector<size_t> rows_;
};

struct ModeGuard {  // eval mode and no autograd for the scope; the previous mode comes back
  model::BridgeTowerForContrastiveLearning& m;
  bool was_training;
  torch::NoGradGuard no_grad;
  explicit ModeGuard(model::BridgeTowerForContrastiveLearning& model) : m(model), was_training(model->is_training()) {
    m->eval();
  }
  ~ModeGuard() {
    if (was_training) m->train();
  }
};

// [images->size(), D] image embeddings (float32, CPU) and which rows were read; the loader sees no shuffle and
// no padding, and a skipped (unreadable) image leaves its row's `ok` false.
torch::Tensor embed_images(model::BridgeTowerForContrastiveLearning& model, std::shared_ptr<const data::Dataset> images,
                           const EmbedOptions& o, std::vector<bool>& ok,
                           const std::function<void(size_t)>& on_batch = {}) {
  loader::LoaderOptions lo;
  lo.num_workers = o.num_workers;
  lo.batch_size = o.batch_size;
  lo.transform.image_size = o.image_size;
  model->config().image.apply_to(lo.transform);  // the mean/std the model was trained with
  lo.on_bad_sample = o.on_bad_sample;
  lo.decoded_cache_mb = 0;
  lo.sampler.shuffle = false;
  lo.sampler.batch_size = size_t(o.batch_size);
  const size_t n = images->size();
  loader::Loader loader(images, lo);
  loader.start_epoch(0);
  const int64_t dim = model->config().contrastive_hidden_size;
  torch::Tensor out = torch::zeros({int64_t(n), dim});
  ok.assign(n, false);
  while (auto b = loader.next()) {
    const int64_t B = b->size, S = b->image_size;
    torch::Tensor pixels = torch::from_blob(b->pixels.data(), {B, 3, S, S}, torch::kFloat32).to(o.device);
    torch::Tensor e;
    {
      model::AutocastScope ac(o.bf16, o.device);
      e = model->encode_image(pixels);
    }
    e = e.to(torch::kCPU, torch::kFloat32);
    for (int64_t j = 0; j < B; ++j) {
      const size_t row = b->rows[size_t(j)];
      if (ok[row]) continue;  // a skipped image's slot is refilled with another row (loader.h); keep the first
      out[int64_t(row)].copy_(e[j]);
      ok[row] = true;
    }
    if (on_batch) on_batch(size_t(B));
  }
  return out;
}

// [texts.size(), D] text embeddings (float32, CPU).
torch::Tensor embed_texts(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                          const std::vector<std::string>& texts, const EmbedOptions& o) {
  std::vector<torch::Tensor> parts;
  const size_t B = size_t(std::max(o.batch_size, 1));
  for (size_t i = 0; i < texts.size(); i += B) {
    std::span<const std::string> chunk(texts.data() + i, std::min(B, texts.size() - i));
    auto enc = tok.encode_batch(chunk, o.max_seq_length, text::Padding::kLongest, 1);
    auto ids = torch::from_blob(enc.input_ids.data(), {enc.batch, enc.length}, torch::kInt64).to(o.device);
    auto mask = torch::from_blob(enc.attention_mask.data(), {enc.batch, enc.length}, torch::kInt64).to(o.device);
    model::AutocastScope ac(o.bf16, o.device);
    parts.push_back(model->encode_text(ids, mask).to(torch::kCPU, torch::kFloat32));
  }
  if (parts.empty()) return torch::zeros({0, model->config().contrastive_hidden_size});
  return torch::cat(parts);
}

std::vector<float> similarity(const torch::Tensor& texts, const torch::Tensor& images) {
  torch::Tensor sim = torch::matmul(texts, images.t()).contiguous();
  return std::vector<float>(sim.data_ptr<float>(), sim.data_ptr<float>() + sim.numel());
}

// Dense ids for strings, in first-seen order.
struct Interner {
  std::unordered_map<std::string, int64_t> index;
  std::vector<std::string> values;
  int64_t add(const std::string& s) {
    auto [it, fresh] = index.emplace(s, int64_t(values.size()));
    if (fresh) values.push_back(s);
    return it->second;
  }
};

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

EmbedOptions standalone_embed_options(model::BridgeTowerForContrastiveLearning& model, int batch_size,
                                      int num_workers, int max_seq_length, const std::string& on_bad_sample,
                                      const torch::Device& device, bool bf16) {
  EmbedOptions eo;
  eo.batch_size = batch_size;
  eo.num_workers = num_workers;
  eo.image_size = model->config().vision.image_size;
  const auto& text_cfg = model->config().text;
  eo.max_seq_length = std::min(max_seq_length, text_cfg.max_position_embeddings - text_cfg.pad_token_id - 1);
  eo.on_bad_sample = on_bad_sample == "skip" ? loader::OnBadSample::kSkip : loader::OnBadSample::kError;
  eo.device = device;
  eo.bf16 = bf16;
  return eo;
}

RetrievalEval evaluate_retrieval(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                                 std::shared_ptr<const data::Dataset> pairs, const EmbedOptions& o, size_t limit) {
  const auto t0 = Clock::now();
  ModeGuard mode(model);
  RetrievalEval r;
  Interner images, texts;
  const size_t n = std::min(limit, pairs->size());
  std::vector<size_t> image_rows;  // one dataset row per distinct image
  std::vector<int64_t> row_image(n, -1), row_text(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (pairs->is_bad(i)) continue;
    const int64_t k = images.add(pairs->image_key(i));
    if (size_t(k) == image_rows.size()) image_rows.push_back(i);
    row_image[i] = k;
    row_text[i] = texts.add(pairs->caption(i));
  }
  std::vector<bool> ok;
  torch::Tensor img = embed_images(model, std::make_shared<RowsView>(pairs, image_rows), o, ok);
  // Keep the images that were read, renumbered densely, and the rows whose image was read.
  std::vector<int64_t> kept(ok.size(), -1), kept_index;
  for (size_t k = 0; k < ok.size(); ++k)
    if (ok[k]) kept[k] = int64_t(kept_index.size()), kept_index.push_back(int64_t(k));
  std::vector<std::string> used_texts;
  std::vector<int64_t> text_image;
  for (size_t i = 0; i < n; ++i) {
    if (row_image[i] < 0) continue;
    if (kept[size_t(row_image[i])] < 0) {
      ++r.skipped;
      continue;
    }
    used_texts.push_back(texts.values[size_t(row_text[i])]);
    text_image.push_back(kept[size_t(row_image[i])]);
  }
  torch::Tensor txt = embed_texts(model, tok, used_texts, o);
  torch::Tensor gallery = img.index_select(0, torch::tensor(kept_index, torch::kLong));
  r.scores = retrieval_recall(similarity(txt, gallery), txt.size(0), gallery.size(0), text_image);
  r.pairs = int64_t(used_texts.size());
  r.images = gallery.size(0);
  r.texts = int64_t(texts.values.size());
  r.seconds = since(t0);
  return r;
}

MatchingSet matching_set_of(const data::ParsedMatching& parsed, const std::string& name, const std::string& folder,
                            std::vector<size_t>* item_of_row) {
  data::ParsedCaptions as_captions;  // one row per good item; paths resolved against the folder
  MatchingSet set;
  if (item_of_row) item_of_row->clear();
  for (size_t i = 0; i < parsed.rows.size(); ++i) {
    const data::MatchingItem& m = parsed.rows[i];
    if (m.bad) continue;
    set.rows.push_back({as_captions.rows.size(), m.choices, m.label});
    as_captions.rows.push_back({m.image, m.choices[size_t(m.label)], m.line, false, ""});
    if (item_of_row) item_of_row->push_back(i);
  }
  set.images = std::make_shared<data::CaptionsDataset>(std::move(as_captions), name, folder);
  return set;
}

double matching_chance(const MatchingEval& e) {
  double sum = 0;
  for (const MatchingAnswer& a : e.answers) sum += 1.0 / double(a.scores.size());
  return e.answers.empty() ? 0.0 : sum / double(e.answers.size());
}

MatchingEval evaluate_matching(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                               const MatchingSet& set, const EmbedOptions& o) {
  const auto t0 = Clock::now();
  ModeGuard mode(model);
  MatchingEval r;
  // Each distinct image once: one dataset row per image key.
  Interner images, texts;
  std::vector<size_t> image_rows;
  std::vector<int64_t> row_image(set.rows.size());
  for (size_t i = 0; i < set.rows.size(); ++i) {
    const size_t dataset_row = set.rows[i].image_row;
    row_image[i] = images.add(set.images->image_key(dataset_row));
    if (size_t(row_image[i]) == image_rows.size()) image_rows.push_back(dataset_row);
  }
  std::vector<bool> ok;
  torch::Tensor img = embed_images(model, std::make_shared<RowsView>(set.images, image_rows), o, ok);
  std::vector<MatchingQuestion> questions;
  for (size_t i = 0; i < set.rows.size(); ++i) {
    if (!ok[size_t(row_image[i])]) {
      ++r.skipped;
      continue;
    }
    MatchingQuestion q;
    q.image = row_image[i];
    q.label = set.rows[i].label;
    for (const std::string& c : set.rows[i].choices) q.choice_text.push_back(texts.add(c));
    questions.push_back(std::move(q));
    r.rows.push_back(i);
  }
  torch::Tensor txt = embed_texts(model, tok, texts.values, o);
  r.scores = score_matching(similarity(txt, img), txt.size(0), img.size(0), questions, &r.answers);
  r.images = img.size(0);
  r.texts = txt.size(0);
  r.seconds = since(t0);
  return r;
}

EncodedCollection encode_collection(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                                    std::shared_ptr<const data::Dataset> data, const EmbedOptions& o,
                                    const std::function<void(size_t, size_t)>& progress) {
  const auto t0 = Clock::now();
  ModeGuard mode(model);
  EncodedCollection c;
  Interner images, texts;
  std::vector<size_t> image_rows;
  for (size_t i = 0; i < data->size(); ++i) {
    if (data->is_bad(i)) continue;
    if (size_t(images.add(data->image_key(i))) == image_rows.size()) image_rows.push_back(i);
    if (!data->caption(i).empty()) texts.add(data->caption(i));
  }
  std::vector<bool> ok;
  size_t done = 0;
  const size_t total = image_rows.size();
  torch::Tensor img = embed_images(model, std::make_shared<RowsView>(data, image_rows), o, ok, [&](size_t n) {
    if (progress) progress(done += n, total);
  });
  std::vector<int64_t> kept;
  for (size_t k = 0; k < ok.size(); ++k)
    if (ok[k]) kept.push_back(int64_t(k)), c.image_rows.push_back(image_rows[k]);
  c.skipped_images = int64_t(ok.size() - kept.size());
  c.images = img.index_select(0, torch::tensor(kept, torch::kLong));
  c.texts = embed_texts(model, tok, texts.values, o);
  c.text_values = std::move(texts.values);
  c.seconds = since(t0);
  return c;
}

torch::Tensor embed_image_rows(model::BridgeTowerForContrastiveLearning& model,
                               std::shared_ptr<const data::Dataset> data, const std::vector<size_t>& rows,
                               const EmbedOptions& o) {
  ModeGuard mode(model);
  std::vector<bool> ok;
  torch::Tensor e = embed_images(model, std::make_shared<RowsView>(data, rows), o, ok);
  for (size_t k = 0; k < ok.size(); ++k)
    if (!ok[k]) fail(data->describe(rows[k]), ": the image could not be read or decoded");
  return e;
}

torch::Tensor embed_text_list(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                              const std::vector<std::string>& texts, const EmbedOptions& o) {
  ModeGuard mode(model);
  return embed_texts(model, tok, texts, o);
}

std::vector<std::vector<uint8_t>> thumbnails(std::shared_ptr<const data::Dataset> data, const std::vector<size_t>& rows,
                                             int size) {
  loader::LoaderOptions lo;
  lo.num_workers = 0;
  lo.batch_size = int(std::max<size_t>(rows.size(), 1));
  lo.transform.image_size = size;
  lo.output_u8 = true;
  lo.output_float = false;
  lo.on_bad_sample = loader::OnBadSample::kSkip;
  lo.decoded_cache_mb = 0;
  lo.sampler.shuffle = false;
  lo.sampler.batch_size = size_t(lo.batch_size);
  std::vector<std::vector<uint8_t>> out(rows.size());
  loader::Loader loader(std::make_shared<RowsView>(data, rows), lo);
  loader.start_epoch(0);
  const size_t bytes = size_t(size) * size_t(size) * 3;
  while (auto b = loader.next())
    for (size_t j = 0; j < size_t(b->size); ++j)
      if (out[b->rows[j]].empty()) out[b->rows[j]].assign(b->pixels_u8.data() + j * bytes, b->pixels_u8.data() + (j + 1) * bytes);
  return out;
}

HeldOutScores held_out_scores(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                              const std::string& synth_dir, const EmbedOptions& o) {
  HeldOutScores h;
  const std::string file = synth_dir + "/matching.jsonl";
  const MatchingEval m = evaluate_matching(model, tok, matching_set_of(data::read_matching_file(file), file, synth_dir), o);
  h.matching_accuracy = m.scores.accuracy;
  h.matching_chance = matching_chance(m);
  source::SourceOptions so;
  so.locality_order = false;
  std::shared_ptr<const data::Dataset> pairs = source::open_source(synth_dir, so).dataset;
  const RetrievalEval r = evaluate_retrieval(model, tok, pairs, o);
  h.retrieval = r.scores;
  h.images = r.images;
  return h;
}

}  // namespace bt::train
