// `bridgetune encode` (see index/embed_index.h): the data through the eval loader and the contrastive heads,
// written as an index folder.
#include <chrono>
#include <cstdio>
#include <optional>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/paths.h"
#include "eval/torch/embed_eval.h"
#include "media/npy.h"
#include "model/api.h"
#include "model/device.h"
#include "report/progress.h"
#include "report/run_log.h"
#include "source/source.h"
#include "index/embed_index.h"

namespace fs = std::filesystem;

namespace bt::index {

namespace {

void check(const EncodeOptions& o) {
  if (o.model_name_or_path.empty()) fail("--model_name_or_path: required (a trained output folder or a hub id)");
  if (!fs::exists(fs::path(o.model_name_or_path) / "config.json"))
    fail("--model_name_or_path ", o.model_name_or_path, ": no config.json in it");
  if (o.data.empty()) fail("--data: required (a captions file or folder, parquet or tar shards)");
  if (o.output_dir.empty()) fail("--output_dir: required (where the index goes)");
  if (o.per_device_eval_batch_size < 1) fail("--per_device_eval_batch_size must be >= 1");
  if (o.dataloader_num_workers < 0) fail("--dataloader_num_workers must be >= 0");
}

void write_npy(const fs::path& path, const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kFloat32).contiguous();
  const std::string bytes = media::npy_bytes(c.data_ptr<float>(), sizeof(float), "<f4", {c.size(0), c.size(1)});
  write_file_atomic(path, bytes);
}

}  // namespace

EncodeSummary run_encode(const EncodeOptions& o) {
  check(o);
  const torch::Device device = model::parse_device(o.device);
  auto data = source::open_source(o.data, source::source_options(o.read, "--data")).dataset;
  // The tokenizer and the text length against the model's config first: no weight is read for a run that cannot go.
  const model::BridgeTowerConfig cfg = model::load_pretrained_config(o.model_name_or_path);
  text::Tokenizer tok = eval::model_tokenizer(o.model_name_or_path, o.tokenizer_name, cfg.text);
  model::resolve_max_seq_length(o.max_seq_length, cfg.text);
  model::BridgeTowerForContrastiveLearning m = model::load_contrastive(
      o.model_name_or_path, model::ModelBudget{false, o.per_device_eval_batch_size, o.max_model_bytes});
  model::configure_inference_threads(o.torch_threads, o.dataloader_num_workers, device, *m);
  m->to(device);
  eval::EmbedOptions eo = eval::standalone_embed_options(m, o.per_device_eval_batch_size, o.dataloader_num_workers,
                                                         o.max_seq_length, o.read.on_bad, device, o.bf16);
  eo.max_image_pixels = o.max_image_pixels;
  std::optional<report::ProgressBar> bar;  // made at the first batch, when the number of distinct images is known
  const auto t0 = std::chrono::steady_clock::now();
  const eval::EncodedCollection c = eval::encode_collection(m, tok, data, eo, [&](size_t done, size_t total) {
    if (!bar) bar.emplace(int64_t(total), 0, stdout, !o.quiet && report::ProgressBar::stdout_is_tty());
    bar->update(int64_t(done), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), "images");
  });
  if (bar && !o.quiet) bar->finish();

  const fs::path out(o.output_dir);
  make_output_folder(out, "--output_dir");
  write_npy(out / "image_embeds.npy", c.images);
  std::string lines;
  for (size_t row : c.image_rows) lines += nlohmann::json{{"image", data->image_key(row)}, {"row", row}}.dump() + "\n";
  write_file_atomic(out / "images.jsonl", lines);
  if (!c.text_values.empty()) {
    write_npy(out / "text_embeds.npy", c.texts);
    lines.clear();
    for (const std::string& t : c.text_values) lines += nlohmann::json{{"text", t}}.dump() + "\n";
    write_file_atomic(out / "texts.jsonl", lines);
  }
  EncodeSummary s;
  s.images = c.images.size(0), s.texts = int64_t(c.text_values.size()), s.skipped = c.skipped_images;
  s.dim = c.images.size(1), s.seconds = c.seconds;
  s.images_per_second = c.seconds > 0 ? double(s.images) / c.seconds : 0;
  report::write_json_atomic(out / "index.json",
                    {{"model", fs::absolute(o.model_name_or_path).lexically_normal().string()},
                     {"tokenizer", fs::absolute(o.tokenizer_name.empty() ? o.model_name_or_path : o.tokenizer_name)
                                       .lexically_normal().string()},
                     {"data", fs::absolute(o.data).lexically_normal().string()},
                     {"image_column", o.read.image_column},
                     {"caption_column", o.read.caption_column.value_or(
                                            source::default_caption_column(data::classify_source(o.data)))},
                     {"dim", s.dim}, {"images", s.images}, {"texts", s.texts}, {"skipped_images", s.skipped},
                     {"transform", {{"image_size", eo.image_size}, {"mode", "eval (resize + centre crop)"},
                                    {"max_seq_length", eo.max_seq_length}}},
                     {"seconds", s.seconds}, {"format", "bridgetune-embed-index-1"}});
  if (!o.quiet)
    std::printf("encoded %lld images and %lld texts (%lld-dim) in %.1f s: %.1f images/s%s\nindex in %s\n",
                (long long)s.images, (long long)s.texts, (long long)s.dim, s.seconds, s.images_per_second,
                s.skipped ? str(" (", s.skipped, " unreadable images skipped)").c_str() : "", out.c_str());
  return s;
}

}  // namespace bt::index
