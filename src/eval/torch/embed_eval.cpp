#include "eval/torch/embed_eval.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <unordered_map>

#include "common/error.h"
#include "data/captions_dataset.h"
#include "data/subset.h"
#include "kernels/autocast.h"
#include "model/api.h"
#include "source/source.h"

namespace bt::eval {

namespace fs = std::filesystem;

namespace {

// Scores from NaN/inf embeddings would be garbage that looks like a result (NaN similarities counted as hits gave
// a diverged model R@1 = 1.0): refused with one line instead.
void require_finite(const torch::Tensor& embeddings, const char* what) {
  if (!torch::isfinite(embeddings).all().item<bool>())
    fail("the model's ", what, " embeddings are not finite (NaN or inf): its weights are damaged or its training "
         "diverged; no score is computed from them");
}


using Clock = std::chrono::steady_clock;

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
  lo.transform.max_image_pixels = o.max_image_pixels;
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
      kernels::AutocastScope ac(o.bf16, o.device);
      e = model->encode_image(pixels);
    }
    e = e.to(torch::kCPU, torch::kFloat32);
    require_finite(e, "image");
    for (int64_t j = 0; j < B; ++j) {
      const size_t row = b->rows[size_t(j)];
      if (ok[row]) continue;  // a skipped image's slot is refilled with another row (loader.h); keep the first
      out[int64_t(row)].copy_(e[j]);
      ok[row] = true;
    }
    if (on_batch) on_batch(size_t(B));
  }
  if (o.skip_reasons)
    for (const std::string& why : loader.stats().first_skipped)
      if (o.skip_reasons->size() < loader::LoaderStats::kMaxNamedSkips) o.skip_reasons->push_back(why);
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
    kernels::AutocastScope ac(o.bf16, o.device);
    parts.push_back(model->encode_text(ids, mask).to(torch::kCPU, torch::kFloat32));
    require_finite(parts.back(), "text");
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

// The pairs of rows [0, n) of a dataset: each good row's image numbered by its key, in first-seen order.
struct PairPlan {
  std::vector<size_t> image_rows;  // per image: the first row showing it
  std::vector<int64_t> row_image;  // per row: its image; -1 for a bad row
  int64_t texts = 0;               // distinct captions of the good rows
};

PairPlan plan_pairs(const data::Dataset& pairs, size_t n) {
  PairPlan p;
  Interner images, texts;
  p.row_image.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (pairs.is_bad(i)) continue;
    p.row_image[i] = images.add(pairs.image_key(i));
    if (size_t(p.row_image[i]) == p.image_rows.size()) p.image_rows.push_back(i);
    texts.add(pairs.caption(i));
  }
  p.texts = int64_t(texts.values.size());
  return p;
}

// The gallery logic of retrieval, for both ways of embedding: the images with an embedding (image_ok) renumbered
// densely, and as queries the rows whose image is among them (and, when row_read is given, that were read);
// texts_of(rows) embeds those rows' captions, in order. A good row left out is counted in `skipped`. Each row's
// ranking (predictions) only when asked: the trainer's evaluations have no use for it.
RetrievalEval score_pairs(const PairPlan& plan, const torch::Tensor& images, const std::vector<bool>& image_ok,
                          const std::vector<bool>& row_read, bool with_predictions,
                          const std::function<torch::Tensor(const std::vector<size_t>&)>& texts_of) {
  RetrievalEval r;
  std::vector<int64_t> kept(image_ok.size(), -1), kept_index;
  for (size_t k = 0; k < image_ok.size(); ++k)
    if (image_ok[k]) kept[k] = int64_t(kept_index.size()), kept_index.push_back(int64_t(k));
  std::vector<size_t> rows;
  std::vector<int64_t> text_image;
  for (size_t i = 0; i < plan.row_image.size(); ++i) {
    if (plan.row_image[i] < 0) continue;
    if (kept[size_t(plan.row_image[i])] < 0 || (!row_read.empty() && !row_read[i])) {
      ++r.skipped;
      continue;
    }
    rows.push_back(i);
    text_image.push_back(kept[size_t(plan.row_image[i])]);
  }
  const torch::Tensor txt = texts_of(rows);
  const torch::Tensor gallery = images.index_select(0, torch::tensor(kept_index, torch::kLong));
  const std::vector<float> sim = similarity(txt, gallery);
  r.scores = retrieval_recall(sim, txt.size(0), gallery.size(0), text_image);
  const std::vector<TextRanking> ranked =
      with_predictions ? text_rankings(sim, txt.size(0), gallery.size(0), text_image) : std::vector<TextRanking>();
  for (size_t t = 0; t < ranked.size(); ++t) {
    RetrievalEval::Prediction p{rows[t], ranked[t].rank, {}};
    for (int64_t j : ranked[t].top) p.top_rows.push_back(plan.image_rows[size_t(kept_index[size_t(j)])]);
    r.predictions.push_back(std::move(p));
  }
  r.pairs = int64_t(rows.size());
  r.images = gallery.size(0);
  r.texts = plan.texts;
  return r;
}

// The full forward of one loader batch (captions cut at o.max_seq_length, padded to the longest), as training
// runs it; the loss only when asked.
model::ContrastiveOutput forward_batch(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                                       const loader::Batch& b, const EmbedOptions& o, bool with_loss) {
  const int64_t B = b.size, S = b.image_size;
  auto enc = tok.encode_batch(b.captions, o.max_seq_length, text::Padding::kLongest, 1);
  auto ids = torch::from_blob(enc.input_ids.data(), {enc.batch, enc.length}, torch::kInt64).to(o.device);
  auto mask = torch::from_blob(enc.attention_mask.data(), {enc.batch, enc.length}, torch::kInt64).to(o.device);
  auto pixels = torch::from_blob(const_cast<float*>(b.pixels.data()), {B, 3, S, S}, torch::kFloat32).to(o.device);
  kernels::AutocastScope ac(o.bf16, o.device);
  return model->forward(pixels, ids, mask, with_loss);
}

}  // namespace

EmbedOptions standalone_embed_options(model::BridgeTowerForContrastiveLearning& model, int batch_size,
                                      int num_workers, const std::optional<int>& max_seq_length,
                                      data::OnBad on_bad_sample, const torch::Device& device, bool bf16) {
  EmbedOptions eo;
  eo.batch_size = batch_size;
  eo.num_workers = num_workers;
  eo.image_size = model->config().vision.image_size;
  eo.max_seq_length = model::resolve_max_seq_length(max_seq_length, model->config().text);
  eo.on_bad_sample = on_bad_sample;
  eo.device = device;
  eo.bf16 = bf16;
  if (bf16 && device.is_cpu())
    if (const std::string note = model::cpu_bf16_note(); !note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
  return eo;
}

text::Tokenizer model_tokenizer(const std::string& model_dir, const std::string& tokenizer_dir,
                                const model::TextConfig& text) {
  const fs::path dir = tokenizer_dir.empty() ? fs::path(model_dir) : fs::path(tokenizer_dir);
  const std::string named = tokenizer_dir.empty() ? "--model_name_or_path " + model_dir
                                                  : "--tokenizer_name " + tokenizer_dir;
  std::error_code ec;
  const bool has_files = fs::is_regular_file(dir / "tokenizer.json", ec) ||
                         (fs::is_regular_file(dir / "vocab.json", ec) && fs::is_regular_file(dir / "merges.txt", ec));
  if (!fs::is_directory(dir, ec))
    fail(named, ": no such folder (give one with tokenizer.json or vocab.json + merges.txt)");
  if (!has_files && tokenizer_dir.empty())
    fail(named, " holds no tokenizer (neither tokenizer.json nor vocab.json + merges.txt): give --tokenizer_name with "
         "the one it was trained with (a folder or hub id, e.g. its base model's)");
  if (!has_files) fail(named, ": holds neither tokenizer.json nor vocab.json + merges.txt");
  text::Tokenizer tok = text::Tokenizer::from_dir(dir.string());
  model::check_vocab_fits(tok.vocab_size(), text, named);
  return tok;
}

RetrievalEval evaluate_retrieval(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                                 std::shared_ptr<const data::Dataset> pairs, const EmbedOptions& o, size_t limit) {
  const auto t0 = Clock::now();
  ModeGuard mode(model);
  const PairPlan plan = plan_pairs(*pairs, std::min(limit, pairs->size()));
  std::vector<bool> ok;
  const torch::Tensor img = embed_images(model, std::make_shared<data::Subset>(pairs, plan.image_rows), o, ok);
  RetrievalEval r = score_pairs(plan, img, ok, {}, o.retrieval_predictions, [&](const std::vector<size_t>& rows) {
    std::vector<std::string> captions;
    for (size_t i : rows) captions.push_back(pairs->caption(i));
    return embed_texts(model, tok, captions, o);
  });
  r.seconds = since(t0);
  return r;
}

RetrievalEval evaluate_retrieval_with_loss(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                                           std::shared_ptr<const data::Dataset> pairs, loader::Loader& loader,
                                           const EmbedOptions& o) {
  const auto t0 = Clock::now();
  ModeGuard mode(model);
  const size_t n = pairs->size();
  const PairPlan plan = plan_pairs(*pairs, n);
  const int64_t dim = model->config().contrastive_hidden_size;
  torch::Tensor images = torch::zeros({int64_t(plan.image_rows.size()), dim}), texts = torch::zeros({int64_t(n), dim});
  std::vector<bool> image_ok(plan.image_rows.size(), false), row_read(n, false);
  double loss_sum = 0;
  int64_t batches = 0, loss_samples = 0;
  loader.start_epoch(0);
  while (auto b = loader.next()) {
    ++batches;
    const model::ContrastiveOutput out = forward_batch(model, tok, *b, o, /*with_loss=*/b->size >= 2);
    if (b->size >= 2) loss_sum += out.loss.item<double>() * double(b->size), loss_samples += b->size;
    const torch::Tensor t = out.text_embeds.to(torch::kCPU, torch::kFloat32);
    const torch::Tensor im = out.image_embeds.to(torch::kCPU, torch::kFloat32);
    require_finite(t, "text");
    require_finite(im, "image");
    for (int64_t j = 0; j < b->size; ++j) {
      const size_t row = b->rows[size_t(j)];
      if (row >= n || row_read[row] || plan.row_image[row] < 0) continue;  // a replacement seen before
      row_read[row] = true;
      texts[int64_t(row)].copy_(t[j]);
      const size_t k = size_t(plan.row_image[row]);
      if (!image_ok[k]) images[int64_t(k)].copy_(im[j]), image_ok[k] = true;
    }
  }
  RetrievalEval r = score_pairs(plan, images, image_ok, row_read, /*with_predictions=*/false, [&](const std::vector<size_t>& rows) {
    return texts.index_select(0, torch::tensor(std::vector<int64_t>(rows.begin(), rows.end()), torch::kLong));
  });
  r.batches = batches, r.loss_samples = loss_samples;
  r.loss = loss_samples ? loss_sum / double(loss_samples) : 0.0;
  r.seconds = since(t0);
  return r;
}

SplitEval evaluate_split(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                         std::shared_ptr<const data::Dataset> pairs, loader::Loader& loader,
                         const MatchingSet* matching, const EmbedOptions& o) {
  const auto t0 = Clock::now();
  SplitEval e;
  e.retrieval = evaluate_retrieval_with_loss(model, tok, std::move(pairs), loader, o);
  if (matching) e.matching = evaluate_matching(model, tok, *matching, o);
  e.seconds = since(t0);
  return e;
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
  torch::Tensor img = embed_images(model, std::make_shared<data::Subset>(set.images, image_rows), o, ok);
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
  torch::Tensor img = embed_images(model, std::make_shared<data::Subset>(data, image_rows), o, ok, [&](size_t n) {
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
  torch::Tensor e = embed_images(model, std::make_shared<data::Subset>(data, rows), o, ok);
  for (size_t k = 0; k < ok.size(); ++k)
    if (!ok[k]) fail(data->describe(rows[k]), ": the image could not be read or decoded");
  return e;
}

torch::Tensor embed_text_list(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                              const std::vector<std::string>& texts, const EmbedOptions& o) {
  ModeGuard mode(model);
  return embed_texts(model, tok, texts, o);
}

HeldOutScores held_out_scores(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                              const std::string& synth_dir, const EmbedOptions& o) {
  HeldOutScores h;
  const std::string file = synth_dir + "/matching.jsonl";
  const MatchingEval m = evaluate_matching(model, tok, matching_set_of(data::read_matching_file(file), file, synth_dir), o);
  h.matching = m.scores;
  source::SourceOptions so;
  so.locality_order = false;
  std::shared_ptr<const data::Dataset> pairs = source::open_source(synth_dir, so).dataset;
  const RetrievalEval r = evaluate_retrieval(model, tok, pairs, o);
  h.retrieval = r.scores;
  h.images = r.images;
  return h;
}

}  // namespace bt::eval
