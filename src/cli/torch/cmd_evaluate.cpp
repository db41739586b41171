// `bridgetune evaluate`: what fine-tuning bought. Scores a contrastive checkpoint on the contest's matching task
// (pick the true caption among the choices) or on image<->text retrieval, and writes eval_results.json.
#include <cstdio>

#include "cli/command.h"
#include "cli/flag_table.h"
#include "cli/hub_flags.h"
#include "cli/loader_flags.h"
#include "cli/model_flags.h"
#include "common/defaults.h"
#include "common/error.h"
#include "common/terminal.h"
#include "data/captions_dataset.h"
#include "eval/evaluate_run.h"

namespace {

void print_table(const bt::eval::EvalMetrics& m, const std::string& out) {
  std::printf("***** eval metrics *****\n");
  for (const auto& [k, v] : m) {
    const bool count = k == "eval_matching_count" || k == "eval_samples" || k == "eval_images" ||
                       k == "eval_texts" || k == "eval_skipped";
    if (count) std::printf("  %-28s = %.0f\n", k.c_str(), v);
    else std::printf("  %-28s = %.4f\n", k.c_str(), v);
  }
  std::printf("results in %s/eval_results.json\n", bt::printable(out).c_str());
}

bt::cli::Registrar reg("evaluate", "Score a checkpoint: contest matching accuracy or image-text retrieval", 25,
                       [](CLI::App& app) {
  namespace flags = bt::cli::flags;
  namespace group = bt::cli::group;
  using bt::cli::add_flag;
  auto o = std::make_shared<bt::eval::EvaluateOptions>();
  auto hub = std::make_shared<bt::cli::HubFlags>();
  // The essentials first, as --help lists them (cli/flag_table.h).
  add_flag(app, flags::kModelNameOrPath, o->model_name_or_path)->required();
  add_flag(app, flags::kTokenizerName, o->tokenizer_name);
  auto ds = std::make_shared<bt::cli::HubDataset>();
  bt::cli::add_hub_dataset_flags(app, add_flag(app, flags::kValidationFile, o->data), ds.get(), hub.get());
  bt::cli::add_enum_flag(app, "--task", o->task,
                         bt::cli::EnumWords<bt::eval::EvalTask>{{"auto", bt::eval::EvalTask::kAuto},
                                                                {"matching", bt::eval::EvalTask::kMatching},
                                                                {"retrieval", bt::eval::EvalTask::kRetrieval}},
                         "auto (matching when the data has caption_choices and label, else retrieval) | matching | "
                         "retrieval")
      ->group(group::kEssentials);
  add_flag(app, flags::kOutputDir, o->output_dir)->required();
  add_flag(app, flags::kMaxEvalSamples, o->max_eval_samples);
  add_flag(app, flags::kImageColumn, o->read.image_column);
  add_flag(app, flags::kCaptionColumn, o->read.caption_column);
  app.add_option("--choices_column", o->choices_column, "matching: the list of caption choices")
      ->capture_default_str()
      ->group(group::kModelData);
  app.add_option("--label_column", o->label_column, "matching: the true choice")
      ->capture_default_str()
      ->group(group::kModelData);
  add_flag(app, flags::kMaxLineBytes, o->read.max_line_bytes)->check(CLI::PositiveNumber);
  bt::cli::add_enum(app, flags::kOnBadSample, o->read.on_bad, bt::cli::kOnBadWords);
  add_flag(app, flags::kPerDeviceEvalBatchSize, o->per_device_eval_batch_size);
  add_flag(app, flags::kNumWorkers, o->dataloader_num_workers);
  add_flag(app, flags::kMaxSeqLength, o->max_seq_length)->default_str(std::to_string(bt::defaults::kMaxSeqLength));
  add_flag(app, flags::kMaxImagePixels, o->max_image_pixels)->check(CLI::PositiveNumber);
  add_flag(app, flags::kDevice, o->device);
  bt::cli::add_switch(app, flags::kBf16, o->bf16);
  bt::cli::add_model_memory_flag(app, &o->max_model_bytes);
  app.callback([o, hub, ds] {
    o->model_name_or_path = hub->resolve(o->model_name_or_path);
    o->tokenizer_name = hub->resolve(o->tokenizer_name, "--tokenizer_name");
    if (!ds->name.empty()) o->data = ds->resolve(hub->cache_dir);
    if (o->data.empty()) bt::fail("give --validation_file FILE or --dataset_name NAME (--dataset_config_name, --split)");
    print_table(bt::eval::run_evaluate(*o), o->output_dir);
  });
});

}  // namespace
