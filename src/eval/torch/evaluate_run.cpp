// `bridgetune evaluate` (see eval/evaluate_run.h): checks, model + tokenizer, the task, result files.
#include "eval/evaluate_run.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/paths.h"
#include "data/captions_dataset.h"
#include "data/matching_parse.h"
#include "eval/torch/embed_eval.h"
#include "eval/torch/matching_source.h"
#include "model/api.h"
#include "model/device.h"
#include "parquet/parquet_dataset.h"
#include "report/run_log.h"
#include "source/source.h"

namespace fs = std::filesystem;

namespace bt::eval {

namespace {

void check(const EvaluateOptions& o) {
  if (o.model_name_or_path.empty()) fail("--model_name_or_path: required (a checkpoint folder with config.json)");
  if (!fs::is_directory(o.model_name_or_path))
    fail("--model_name_or_path ", o.model_name_or_path, ": no such folder");
  if (!fs::exists(fs::path(o.model_name_or_path) / "config.json"))
    fail("--model_name_or_path ", o.model_name_or_path, ": no config.json in it");
  if (o.data.empty()) fail("--validation_file: required (a matching JSONL file, or image-caption pairs for retrieval)");
  if (o.output_dir.empty()) fail("--output_dir: required");
  if (std::string why = output_folder_problem(o.output_dir); !why.empty()) fail("--output_dir ", o.output_dir, ": ", why);
  if (o.per_device_eval_batch_size < 1) fail("--per_device_eval_batch_size must be >= 1");
  if (o.dataloader_num_workers < 0) fail("--dataloader_num_workers must be >= 0");
}

std::string letter(int k) { return std::string(1, char('A' + k)); }

void add_metrics(EvalMetrics& m, const nlohmann::json& j) {
  for (const auto& [k, v] : j.items()) m[k] = v.get<double>();
}

// The keys both tasks report: the scored count n, the images read, what was left out, and the time.
EvalMetrics run_metrics(double n, int64_t images, int64_t skipped, double seconds) {
  return {{"eval_images", double(images)},
          {"eval_skipped", double(skipped)},
          {"eval_runtime", seconds},
          {"eval_samples_per_second", seconds > 0 ? n / seconds : 0.0}};
}

// A run's scores and the files that report them (written by run_evaluate once everything is scored).
struct Scored {
  EvalMetrics metrics;
  std::string predictions;  // predictions.jsonl's lines (either task)
};

// --task auto: the matching questions when the data has their shape, else retrieval; said in one line.
EvalTask task_of(const EvaluateOptions& o) {
  if (o.task != EvalTask::kAuto) return o.task;
  MatchingSourceOptions mo = matching_source_options(o.read, o.max_eval_samples);
  mo.choices_column = o.choices_column;
  mo.label_column = o.label_column;
  const bool matching = !matching_data_of(o.data, mo).empty();
  if (!o.quiet)
    std::printf("evaluate: task %s (%s; --task %s scores the other)\n", matching ? "matching" : "retrieval",
                matching ? (o.choices_column + " and " + o.label_column + " found").c_str()
                         : ("no " + o.choices_column + "/" + o.label_column + ": image-caption pairs").c_str(),
                matching ? "retrieval" : "matching");
  return matching ? EvalTask::kMatching : EvalTask::kRetrieval;
}

Scored matching(model::BridgeTowerForContrastiveLearning& m, const text::Tokenizer& tok, const EvaluateOptions& o,
                const EmbedOptions& eo) {
  MatchingSourceOptions mo = matching_source_options(o.read, o.max_eval_samples);
  mo.choices_column = o.choices_column;
  mo.label_column = o.label_column;
  OpenedMatching opened = open_matching(o.data, mo);
  if (opened.set.rows.empty()) fail(o.data, ": no rows to score");
  MatchingEval r = evaluate_matching(m, tok, opened.set, eo);
  Scored out;
  for (size_t k = 0; k < r.answers.size(); ++k) {
    const MatchingSet::Row& q = opened.set.rows[r.rows[k]];
    nlohmann::ordered_json row = opened.where[r.rows[k]];
    row["label"] = letter(q.label);
    row["predicted"] = letter(r.answers[k].predicted);
    row["correct"] = r.answers[k].predicted == q.label;
    row["scores"] = r.answers[k].scores;
    out.predictions += row.dump() + "\n";
  }
  const double n = double(r.scores.count);
  out.metrics = run_metrics(n, r.images, r.skipped + int64_t(opened.bad), r.seconds);
  out.metrics["eval_matching_count"] = n;
  out.metrics["eval_texts"] = double(r.texts);
  add_metrics(out.metrics, to_json(r.scores, "eval"));
  return out;
}

Scored retrieval(model::BridgeTowerForContrastiveLearning& m, const text::Tokenizer& tok, const EvaluateOptions& o,
                 const EmbedOptions& eo) {
  std::shared_ptr<const data::Dataset> pairs =
      source::open_source(o.data, source::source_options(o.read, "--validation_file")).dataset;
  RetrievalEval r = evaluate_retrieval(m, tok, pairs, eo, o.max_eval_samples > 0 ? size_t(o.max_eval_samples) : SIZE_MAX);
  const double n = double(r.pairs);
  Scored out;
  for (const RetrievalEval::Prediction& p : r.predictions) {
    nlohmann::ordered_json row = {{"row", p.row}, {"image", pairs->image_key(p.row)}, {"caption", pairs->caption(p.row)},
                                  {"rank", p.rank}, {"top_images", nlohmann::json::array()}};
    for (size_t k : p.top_rows) row["top_images"].push_back(pairs->image_key(k));
    out.predictions += row.dump() + "\n";
  }
  out.metrics = run_metrics(n, r.images, r.skipped, r.seconds);
  out.metrics["eval_samples"] = n;
  out.metrics["eval_i2t_median_rank"] = r.scores.i2t_median_rank;
  out.metrics["eval_t2i_median_rank"] = r.scores.t2i_median_rank;
  add_metrics(out.metrics, to_json(r.scores, "eval"));
  return out;
}

}  // namespace

EvalMetrics run_evaluate(const EvaluateOptions& o) {
  check(o);
  const torch::Device device = model::parse_device(o.device);
  // The tokenizer and the text length against the model's config first: no weight is read for a run that cannot go.
  const model::BridgeTowerConfig cfg = model::load_pretrained_config(o.model_name_or_path);
  text::Tokenizer tok = model_tokenizer(o.model_name_or_path, o.tokenizer_name, cfg.text);
  model::resolve_max_seq_length(o.max_seq_length, cfg.text);
  model::BridgeTowerForContrastiveLearning m = model::load_contrastive(
      o.model_name_or_path, model::ModelBudget{false, o.per_device_eval_batch_size, o.max_model_bytes});
  model::configure_inference_threads(0, o.dataloader_num_workers, device, *m);
  m->to(device);
  EmbedOptions eo = standalone_embed_options(m, o.per_device_eval_batch_size, o.dataloader_num_workers,
                                             o.max_seq_length, o.read.on_bad, device, o.bf16);
  eo.max_image_pixels = o.max_image_pixels;
  std::vector<std::string> skipped;  // --on_bad_sample skip: the first images left out, with why
  eo.skip_reasons = &skipped;
  eo.retrieval_predictions = true;
  const bool is_matching = task_of(o) == EvalTask::kMatching;
  const Scored scored = is_matching ? matching(m, tok, o, eo) : retrieval(m, tok, o, eo);
  make_output_folder(o.output_dir, "--output_dir");
  write_file_atomic(fs::path(o.output_dir) / "predictions.jsonl", scored.predictions);
  nlohmann::ordered_json j;
  for (const auto& [k, v] : scored.metrics) j[k] = v;
  if (!skipped.empty()) j["eval_first_skipped"] = skipped;
  report::write_json_atomic(fs::path(o.output_dir) / "eval_results.json", j);
  return scored.metrics;
}

}  // namespace bt::eval
