// `bridgetune evaluate`: what fine-tuning bought. Scores a contrastive checkpoint on the contest's matching task
// (pick the true caption among the choices) or on image<->text retrieval, and writes eval_results.json.
#include <array>
#include <cstdio>

#include "cli/command.h"
#include "cli/hub_flags.h"
#include "cli/loader_flags.h"
#include "cli/model_flags.h"
#include "common/error.h"
#include "data/captions_dataset.h"
#include "eval/evaluate_run.h"
#include "hub/dataset_files.h"

namespace {

void print_table(const bt::eval::EvalMetrics& m, const std::string& out) {
  std::printf("***** eval metrics *****\n");
  for (const auto& [k, v] : m) {
    const bool count = k == "eval_matching_count" || k == "eval_samples" || k == "eval_images" ||
                       k == "eval_texts" || k == "eval_skipped";
    if (count) std::printf("  %-28s = %.0f\n", k.c_str(), v);
    else std::printf("  %-28s = %.4f\n", k.c_str(), v);
  }
  std::printf("results in %s/eval_results.json\n", out.c_str());
}

bt::cli::Registrar reg("evaluate", "Score a checkpoint: contest matching accuracy or image-text retrieval", 25,
                       [](CLI::App& app) {
  auto o = std::make_shared<bt::eval::EvaluateOptions>();
  auto hub = std::make_shared<bt::cli::HubFlags>();
  app.add_option("--model_name_or_path", o->model_name_or_path,
                 "Checkpoint folder (config.json, weights, tokenizer files; e.g. a train --output_dir) or a hub id "
                 "(org/name) in the local HF cache")
      ->required();
  bt::cli::add_hub_flags(app, &hub->revision, &hub->cache_dir);
  auto vf = app.add_option("--validation_file", o->data,
                           "matching: JSONL with image, caption_choices, label (A-E or 0-based), or HF parquet; "
                           "retrieval: captions file/folder, tar shards or parquet. Image paths are relative to the "
                           "file's folder");
  auto ds = std::make_shared<std::array<std::string, 4>>(std::array<std::string, 4>{"", "", bt::cli::kDefaultEvalSplit, "main"});
  auto dn = app.add_option("--dataset_name", (*ds)[0],
                           "A hub dataset (org/name, in the local HF cache) or a folder of the same layout, "
                           "e.g. jmhessel/newyorker_caption_contest");
  app.add_option("--dataset_config_name", (*ds)[1], "Its config, e.g. matching");
  app.add_option("--split", (*ds)[2], "Its split: train, validation, test")->capture_default_str();
  app.add_option("--dataset_revision", (*ds)[3], "Hub datasets: branch, tag or commit")->capture_default_str();
  vf->excludes(dn);
  dn->excludes(vf);
  bt::cli::add_enum_flag(app, "--task", o->task,
                         bt::cli::EnumWords<bt::eval::EvalTask>{{"auto", bt::eval::EvalTask::kAuto},
                                                                {"matching", bt::eval::EvalTask::kMatching},
                                                                {"retrieval", bt::eval::EvalTask::kRetrieval}},
                         "auto (matching when the data has caption_choices and label, else retrieval) | matching | "
                         "retrieval");
  app.add_option("--output_dir", o->output_dir, "Where eval_results.json (and predictions.jsonl) go")->required();
  app.add_option("--per_device_eval_batch_size", o->per_device_eval_batch_size, "Images per forward")->capture_default_str();
  app.add_option("--dataloader_num_workers", o->dataloader_num_workers, "Loader threads decoding images")->capture_default_str();
  app.add_option("--max_eval_samples", o->max_eval_samples, "Only the first N rows (0: all, as in train)")->capture_default_str();
  app.add_option("--max_seq_length", o->max_seq_length, "Caption truncation (tokens)")->capture_default_str();
  app.add_option("--image_column", o->read.image_column, "Image column (CSV/JSONL/parquet)")->capture_default_str();
  app.add_option("--caption_column", o->read.caption_column, std::string("retrieval: ") + bt::source::kCaptionColumnHelp);
  app.add_option("--choices_column", o->choices_column, "matching: the list of caption choices")->capture_default_str();
  app.add_option("--label_column", o->label_column, "matching: the true choice")->capture_default_str();
  app.add_option("--max_line_bytes", o->read.max_line_bytes, "Refuse a longer JSONL line or CSV record")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  bt::cli::add_enum_flag(app, "--on_bad_sample", o->read.on_bad, bt::cli::kOnBadWords,
                         "error | skip (count and leave out bad rows and images)");
  app.add_option("--device", o->device, "cpu | cuda")->capture_default_str();
  app.add_flag("--bf16", o->bf16, "bf16 autocast");
  bt::cli::add_model_memory_flag(app, &o->max_model_bytes);
  app.callback([o, hub, ds] {
    o->model_name_or_path = hub->resolve(o->model_name_or_path);
    if (!(*ds)[0].empty()) {
      o->data = bt::hub::resolve_dataset_split({(*ds)[0], (*ds)[1], (*ds)[3], hub->cache_dir}, (*ds)[2]);
    }
    if (o->data.empty()) bt::fail("give --validation_file FILE or --dataset_name NAME (--dataset_config_name, --split)");
    print_table(bt::eval::run_evaluate(*o), o->output_dir);
  });
});

}  // namespace
