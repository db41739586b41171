// `bridgetune train`: contrastive fine-tuning with the Hugging Face example's flags (see train/trainer.h and, for
// --do_train/--do_eval/--do_predict, --dataset_name and the HF result files, train/recipe.h). The example's command
// runs as pasted: its Gaudi-only flags are accepted with one line saying they do not apply. With --demo, or with no
// flag at all, it runs the embedded demo (train/demo.h). The flags go into RecipeOptions exactly as given: what a
// run makes of them (the demo's recipe, strategies, --fp16) is resolved once, in train/run_settings.h.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/flag_table.h"
#include "cli/hf_compat.h"
#include "cli/hub_flags.h"
#include "cli/loader_flags.h"
#include "cli/model_flags.h"
#include "cli/perf_flags.h"
#include "common/defaults.h"
#include "common/error.h"
#include "common/file_gate.h"
#include "data/captions_dataset.h"
#include "dist/env.h"
#include "source/mixed_source.h"
#include "train/recipe.h"
#include "train/run_settings.h"
#include "train/stop_signal.h"

namespace bt::cli {
namespace {

// The HF example's flags bridgetune accepts without a use (Gaudi/HPU settings): value-taking ones and switches.
const char* const kGaudiOptions[] = {"--gaudi_config_name", "--distribution_strategy"};
const char* const kGaudiFlags[] = {"--use_habana", "--use_lazy_mode", "--use_hpu_graphs_for_inference",
                                   "--use_hpu_graphs_for_training", "--sdp_on_bf16", "--pipelining_fwd_bwd",
                                   "--non_blocking_data_copy"};

const EnumWords<train::IntervalStrategy> kStrategyWords = {{"no", train::IntervalStrategy::kNo},
                                                           {"steps", train::IntervalStrategy::kSteps},
                                                           {"epoch", train::IntervalStrategy::kEpoch}};

// A default as --help (and training_args.json, for flags not given) shows it: CLI11's own formatting.
template <typename T>
std::string shown(T v) {
  return CLI::detail::to_string(v);
}

// The run's arguments as JSON (training_args.json): every flag with the value it was given or its default, typed as
// far as the text tells (numbers, true/false, strings), and under "bridgetune_given" the flags that were given on the
// command line (not those an environment variable set: cli/flag_table.h).
nlohmann::json arguments_of(const CLI::App& app) {
  nlohmann::json j = nlohmann::json::object(), given = nlohmann::json::object();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_lnames().empty() || opt->get_group().empty() || opt->get_lnames()[0] == "help") continue;
    const std::string name = opt->get_lnames()[0];
    std::string v = opt->count() > 0 && !opt->results().empty() ? opt->results().back() : opt->get_default_str();
    if (opt->get_expected_max() == 0) {  // a switch (--flag, --flag=False)
      j[name] = opt->count() > 0 && (opt->results().empty() || CLI::detail::to_flag_value(opt->results().back()) > 0);
    } else if (opt->get_type_name() == "BOOLEAN") {  // a bool option (--jpeg_dct_scaling false): true/false, not 1/0
      j[name] = CLI::detail::to_flag_value(v) > 0;
    } else {
      auto parsed = nlohmann::json::parse(v, nullptr, false);
      j[name] = !parsed.is_discarded() && (parsed.is_number() || parsed.is_boolean()) ? parsed : nlohmann::json(v);
    }
    if (opt->count() > 0 && !from_environment(*opt)) given[name] = j[name];
  }
  j["bridgetune_given"] = given;
  j["bridgetune_version"] = BT_VERSION;
  return j;
}

// What the callback needs beyond the options themselves: which flags were given, and the flags accepted without a
// use here (the Gaudi-only ones, --trust_remote_code, --remove_unused_columns).
struct TrainFlags {
  train::RecipeOptions recipe;
  CLI::Option *resume = nullptr, *greater_is_better = nullptr;
  bool trust_remote_code = false, remove_unused_columns = true, greater = false;
  std::vector<std::string> gaudi_values = std::vector<std::string>(std::size(kGaudiOptions));
  std::vector<CLI::Option*> gaudi;
};

void add_model_and_data_flags(CLI::App& app, TrainFlags& f) {
  train::RecipeOptions* r = &f.recipe;
  train::TrainOptions* o = &r->train;
  f.resume = app.add_option("--resume_from_checkpoint", o->resume_from_checkpoint,
                                   "Continue a run: a checkpoint-N folder, 'latest' (default when no value), or "
                                   "'latest_or_none' (the newest checkpoint, or from scratch when there is none: one "
                                   "requeue script for the first run and every restart)")
                        ->expected(0, 1)
                        ->group(group::kCheckpoints);
  add_flag(app, flags::kModelNameOrPath, o->model_name_or_path);
  add_hub_flags(app, &o->model_revision, &o->cache_dir);
  add_flag(app, flags::kModelPreset, o->model_preset);
  add_flag(app, flags::kTokenizerName, o->tokenizer_name);
  add_flag(app, flags::kTokenizerVocabSize, o->tokenizer_vocab_size);
  app.add_option_function<std::vector<std::string>>(
         "--train_file",
         [o](const std::vector<std::string>& v) {  // several: mixed (source/mixed_source.h); train_file the first
           const std::vector<std::string> files = source::split_train_files(v);
           o->train_file = files.empty() ? "" : files.front();
           o->train_mix_files = files.size() > 1 ? files : std::vector<std::string>{};
         },
         "Captions file (JSONL/CSV), image folder with captions.jsonl, HF parquet (file, folder, glob) or tar shards. "
         "Several (repeated, or a comma list): mixed as HF's interleave_datasets")
      ->expected(1, -1)
      ->group(group::kEssentials);
  app.add_flag("--demo", o->demo,
               "The built-in demo: generated cartoons in --output_dir/demo_data, the demo's recipe for the flags not "
               "given (`bridgetune train` with no flag at all runs it too; otherwise training needs a data flag)")
      ->group(group::kEssentials);
  app.add_option("--train_shards", o->train_shards, "WebDataset tar shards: a .tar, a glob, a brace pattern (shard-{000..009}.tar) or a folder; or streamed: "
                 "http(s)://.../shard-{000..009}.tar or pipe:COMMAND (its stdout, e.g. pipe:aws s3 cp s3://b/s-{0..9}.tar -), "
                 "retried and resumed on a broken transfer, held in memory for now");
  add_flag(app, flags::kShuffleWindowRowGroups, o->shuffle_window_row_groups);
  add_flag(app, flags::kValidationFile, o->validation_file);
  app.add_option("--test_file", r->test_file, "Test split (same forms) for --do_predict");
  add_flag(app, flags::kDatasetName, r->dataset.name);
  add_flag(app, flags::kDatasetConfigName, r->dataset.config);
  add_flag(app, flags::kDatasetRevision, r->dataset.revision);
  add_flag(app, flags::kImageColumn, o->read.image_column);
  add_flag(app, flags::kCaptionColumn, o->read.caption_column);
  add_flag(app, flags::kOutputDir, o->output_dir);
  app.add_flag("--overwrite_output_dir", o->overwrite_output_dir, "Replace a finished or interrupted run in --output_dir")
      ->group(group::kCheckpoints);
  app.add_flag("--resume_with_changed_data", o->resume_with_changed_data,
               "Resume a checkpoint made on other data (rows or captions differ) on purpose; without it, refused")
      ->group(group::kCheckpoints);
  app.add_option_function<std::string>(
      "--train_mix_weights", [o](const std::string& v) { o->train_mix_weights = loader::parse_mix_weights(v); },
      "Several --train_file: the probability of drawing each next example from each (e.g. 0.7,0.3; normalised); "
      "none: round-robin");
  add_enum_flag(app, "--train_mix_stopping", o->train_mix_stopping,
                EnumWords<loader::MixStopping>{{"first_exhausted", loader::MixStopping::kFirstExhausted},
                                               {"all_exhausted", loader::MixStopping::kAllExhausted}},
                "Several --train_file: an epoch ends when the first dataset runs out (first_exhausted), or when every "
                "one has been read through, the others restarting (all_exhausted: oversampling)");
}

// The HF example's flags that select phases and outputs, and the ones accepted for it without a use here.
void add_hf_flags(CLI::App& app, TrainFlags& f) {
  train::RecipeOptions* r = &f.recipe;
  train::TrainOptions* o = &r->train;
  app.add_flag("--do_train", r->do_train, "Train (HF semantics: without it nothing trains; none of --do_train/--do_eval/--do_predict: train, evaluating on --validation_file)");
  app.add_flag("--do_eval", r->do_eval, "Evaluate on the validation split after training (or the given model)");
  app.add_flag("--do_predict", r->do_predict, "Evaluate on the test split (test_results.json, metric prefix test)");
  app.add_option("--max_train_samples", o->max_train_samples, "Only the first N training rows (0: all)")
      ->capture_default_str()
      ->group(group::kModelData);
  add_flag(app, flags::kMaxEvalSamples, o->max_eval_samples);
  app.add_option("--max_predict_samples", r->max_predict_samples, "Only the first N test rows (0: all)")
      ->capture_default_str()
      ->group(group::kModelData);
  app.add_option_function<std::vector<std::string>>(
        "--report_to", [r](const std::vector<std::string>& v) { r->report_to = report::parse_report_to(v); },
        "none|all|tensorboard|mlflow|wandb, several as HF takes them (tensorboard mlflow, or tensorboard,mlflow); "
        "all = tensorboard + mlflow (MLflow's file store: MLFLOW_TRACKING_URI=file:PATH, else ./mlruns; "
        "MLFLOW_EXPERIMENT_NAME, MLFLOW_RUN_ID, MLFLOW_TAGS); wandb = the TensorBoard events, for `wandb sync --sync-tensorboard`")
      ->expected(1, -1)
      ->default_str(report::report_to_words(r->report_to));
  app.add_option("--logging_dir", r->logging_dir, "TensorBoard event files (default OUTPUT_DIR/runs/<Mon DD_HH-MM-SS>_<host>)");
  app.add_flag("--remove_unused_columns", f.remove_unused_columns, "Accepted for the HF example (=False as it passes); bridgetune reads only the image and caption columns either way")
      ->group(group::kHfCompat);
  add_enum_flag(app, "--eval_strategy,--evaluation_strategy", o->eval_strategy, kStrategyWords,
                "no|steps|epoch: evaluate during training (steps: every --eval_steps, default --logging_steps)");
  add_enum_flag(app, "--save_strategy", o->save_strategy, kStrategyWords,
                "no|steps|epoch: checkpoints (steps: every --save_steps, default 500)");
  app.add_flag("--fp16", o->fp16, "Mixed precision: on CUDA fp16 autocast with dynamic loss scaling (for GPUs without bf16); on CPU bf16 autocast (--bf16)");
  app.add_flag("--trust_remote_code", f.trust_remote_code, "Accepted for the HF example; bridgetune never executes code from a model or dataset repository")
      ->group(group::kHfCompat);
  for (size_t i = 0; i < std::size(kGaudiOptions); ++i)
    f.gaudi.push_back(app.add_option(kGaudiOptions[i], f.gaudi_values[i], "Gaudi (HPU) only: accepted, does not apply")->group(group::kGaudi));
  const std::string gaudi_desc = "Gaudi (HPU) only: accepted, does not apply";
  for (const char* name : kGaudiFlags) f.gaudi.push_back(app.add_flag(std::string(name), gaudi_desc)->group(group::kGaudi));
}

void add_optimisation_flags(CLI::App& app, TrainFlags& f) {
  train::TrainOptions* o = &f.recipe.train;
  const train::RunSettings defaults;  // the defaults of the flags the demo's recipe changes
  // Unset (optional) targets: the default shown is the recipe's (train/run_settings.h), the demo's where it differs.
  add_flag(app, flags::kPerDeviceTrainBatchSize, o->per_device_train_batch_size)->default_str(shown(defaults.train_batch));
  add_flag(app, flags::kPerDeviceEvalBatchSize, o->per_device_eval_batch_size);
  app.add_option("--learning_rate", o->learning_rate, "Peak AdamW learning rate (after warm-up)")
      ->default_str(shown(defaults.learning_rate))
      ->group(group::kEssentials);
  app.add_option("--weight_decay", o->weight_decay, "AdamW weight decay (not on biases and LayerNorm weights, as HF)")->capture_default_str();
  app.add_option("--adam_beta1", o->adam_beta1, "AdamW beta1")->capture_default_str();
  app.add_option("--adam_beta2", o->adam_beta2, "AdamW beta2")->capture_default_str();
  app.add_option("--adam_epsilon", o->adam_epsilon, "AdamW epsilon")->capture_default_str();
  app.add_option("--warmup_steps", o->warmup_steps, "Linear warm-up steps (overrides --warmup_ratio when > 0)")->capture_default_str();
  app.add_option("--warmup_ratio", o->warmup_ratio, "Warm-up as a fraction of the total steps")->default_str(shown(defaults.warmup_ratio));
  app.add_option("--lr_scheduler_type", o->lr_scheduler_type, "linear|cosine|constant|constant_with_warmup")->capture_default_str();
  app.add_option("--num_train_epochs", o->num_train_epochs, "Epochs (fractions allowed) when --max_steps <= 0")
      ->capture_default_str()
      ->group(group::kEssentials);
  add_flag(app, flags::kMaxSteps, o->max_steps);
  app.add_option("--gradient_accumulation_steps", o->gradient_accumulation_steps, "Micro-batches per optimizer step (see --contrastive_accumulation)")->capture_default_str();
  add_enum_flag(app, "--contrastive_accumulation", o->contrastive_accumulation,
                EnumWords<train::ContrastiveAccumulation>{
                    {train::accumulation_name(train::ContrastiveAccumulation::kExact), train::ContrastiveAccumulation::kExact},
                    {train::accumulation_name(train::ContrastiveAccumulation::kLocal), train::ContrastiveAccumulation::kLocal}},
                "With --gradient_accumulation_steps K: exact (one loss over all K x B rows: the weights a batch of "
                "K x B trains, one extra forward per micro-batch) | local (HF: each micro-batch its own negatives)");
  app.add_flag("--gradient_checkpointing", o->gradient_checkpointing,
               "Recompute each layer's activations in backward: less memory for one more forward (same gradients)");
  app.add_option("--max_grad_norm", o->max_grad_norm, "Clip the total gradient norm (<= 0: off)")->capture_default_str();
  app.add_option("--max_nonfinite_steps", o->max_nonfinite_steps,
                 "A step whose loss or gradient norm is NaN/inf is skipped (never applied); this many in a row stop the "
                 "run with the step, the last good checkpoint and the likely cause")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_flag(app, flags::kSeed, o->seed);
}

// What each part of the model trains at (train/torch/param_setup.h) and the contrastive loss's temperature.
void add_finetuning_flags(CLI::App& app, TrainFlags& f) {
  train::TrainOptions* o = &f.recipe.train;
  // Unset: --learning_rate's (the tower inherits); 0 is a rate of 0, never "inherit" (issue 57).
  app.add_option("--vision_learning_rate", o->vision_learning_rate,
                 "The vision tower's peak learning rate (unset: --learning_rate; 0: it stays as loaded, though "
                 "--freeze_vision_model does that without computing its gradients)");
  app.add_option("--text_learning_rate", o->text_learning_rate,
                 "The text tower's peak learning rate (unset: --learning_rate; 0: it stays as loaded, though "
                 "--freeze_text_model does that without computing its gradients)");
  app.add_option("--cross_modal_learning_rate", o->cross_modal_learning_rate,
                 "The cross-modal layers', link towers' and heads' peak learning rate (unset: --learning_rate; 0: "
                 "they stay as loaded)");
  app.add_option("--layer_decay", o->layer_decay,
                 "Layer-wise learning-rate decay D: in each tower, block i of L learns at D^(L - i) of its tower's rate, "
                 "the embeddings at D^(L + 1) (BEiT's rule; 1: none)")
      ->capture_default_str()
      ->check(CLI::Range(1e-6, 1.0));
  app.add_flag("--freeze_vision_model", o->freeze_vision_model, "Train without updating the vision tower");
  app.add_flag("--freeze_text_model", o->freeze_text_model, "Train without updating the text tower");
  app.add_option("--freeze_text_pooler", o->freeze_text_pooler,
                 "true|false: the text tower's pooler (HF's BridgeTower does not use it in the contrastive loss)")->capture_default_str();
  app.add_option("--freeze_vision_layers", o->freeze_vision_layers,
                 "Freeze the vision tower's embeddings and first N blocks (open_clip's locked lower layers)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--freeze_text_layers", o->freeze_text_layers, "Freeze the text tower's embeddings and first N layers")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--logit_scale_init", o->logit_scale_init,
                 "Start logit_scale (the log of the inverse temperature) here instead of the model's value (not on resume)");
  app.add_option("--logit_scale_max", o->logit_scale_max,
                 "Keep exp(logit_scale) at or below this after every step (CLIP: 100; 0: no bound)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_flag("--freeze_logit_scale", o->freeze_logit_scale, "Keep the temperature fixed");
  app.add_option("--label_smoothing", o->label_smoothing,
                 "Label smoothing of each contrastive cross-entropy (0: none)")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  app.add_option("--lora_rank", o->lora_rank,
                 "Train LoRA adapters of this rank instead of every weight (0: full fine-tuning); the output folder "
                 "gets PEFT's adapter_config.json + adapter_model.safetensors beside the base weights")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--lora_alpha", o->lora_alpha, "LoRA's scale: updates are multiplied by alpha / rank")->capture_default_str();
  app.add_option("--lora_dropout", o->lora_dropout, "Dropout on each adapter's input while training")->capture_default_str();
  app.add_option("--lora_target_modules", o->lora_target_modules,
                 "Comma-separated names of the Linear layers that get adapters (PEFT's rule: a module whose name ends "
                 "in one); the default reaches all three parts")->capture_default_str();
  app.add_option("--lora_modules_to_save", o->lora_modules_to_save,
                 "Comma-separated modules trained whole beside the adapters (PEFT's modules_to_save; \"\": none)")
      ->capture_default_str();
  app.add_flag("--merge_lora", o->merge_lora,
               "Fold the trained adapters into the weights: the output folder is a plain checkpoint");
}

void add_pipeline_and_runtime_flags(CLI::App& app, TrainFlags& f) {
  train::RecipeOptions* r = &f.recipe;
  train::TrainOptions* o = &r->train;
  const train::RunSettings defaults;  // the defaults of the flags the demo's recipe changes
  add_flag(app, flags::kMaxSeqLength, o->max_seq_length)->default_str(shown(defaults::kMaxSeqLength));
  add_flag(app, flags::kNumWorkers, o->dataloader_num_workers);
  add_flag(app, flags::kPrefetchBatches, o->prefetch_batches);
  add_flag(app, flags::kImageSize, o->image_size);
  add_flag(app, flags::kDedupeImagesInBatch, o->dedupe_images_in_batch);
  add_switch(app, flags::kUseMediaPipeline, o->use_media_pipeline);
  add_enum(app, flags::kMediaDecode, o->media_decode, kMediaDecodeWords);
  app.add_flag("--use_habana_media_pipeline,--mediapipe_dataloader", r->media_pipeline_where_possible,
               "The Gaudi examples' names of --use_media_pipeline: on where it can run, else one line and the CPU loader");
  add_augment_flags(app, o->train_transform);  // --train_transform, --rrc_scale/_ratio, --hflip_p, --color_jitter
  add_enum(app, flags::kOnBadSample, o->read.on_bad, kOnBadWords);
  add_flag(app, flags::kMaxImageBytes, o->read.max_image_bytes)->check(CLI::PositiveNumber);
  add_flag(app, flags::kMaxLineBytes, o->read.max_line_bytes)->check(CLI::PositiveNumber);
  add_flag(app, flags::kMaxImagePixels, o->max_image_pixels)->check(CLI::PositiveNumber);
  add_flag(app, flags::kDecodedCacheMb, o->decoded_cache_mb);
  add_flag(app, flags::kJpegDctScaling, o->jpeg_dct_scaling);
  add_flag(app, flags::kDevice, o->device);
  bt::cli::add_model_memory_flag(app, &o->max_model_bytes);
  app.add_option("--ddp_timeout", o->ddp_timeout, "Multi-process: seconds a rank waits for the others (rendezvous, each collective)")->capture_default_str();
  app.add_flag("--gather_embeddings", o->gather_embeddings, "Multi-process: contrastive negatives over the global batch (all-gather with gradient)");
  app.add_option("--dropout", o->dropout, "Override the model's hidden/attention dropout (< 0: the config's)")->default_str(shown(defaults.dropout));
  add_switch(app, flags::kBf16, o->bf16);
  add_flag(app, flags::kTorchThreads, o->torch_threads);
  app.add_option("--logging_steps", o->logging_steps, "Log the mean loss every N steps")
      ->default_str(shown(defaults.logging_steps))
      ->group(group::kCheckpoints);
  app.add_option("--eval_steps", o->eval_steps,
                 "Evaluate every N steps (< 0: each epoch; 0 without --eval_strategy: only at the end); with "
                 "--eval_strategy steps and no N: every --logging_steps")
      ->default_str("0")
      ->group(group::kSelection);
  app.add_option("--save_steps", o->save_steps,
                 "Checkpoint every N steps (< 0: each epoch; 0: none; with --save_strategy steps and no N: 500)")
      ->default_str("0")
      ->group(group::kCheckpoints);
  app.add_option("--save_total_limit", o->save_total_limit, "Keep the newest N checkpoints (0: all)")
      ->capture_default_str()
      ->group(group::kCheckpoints);
  add_flag(app, flags::kThroughputWarmupSteps, o->throughput_warmup_steps);
  add_perf_flags(app, o);  // --attention_backend, --loader_worker_nice/_affinity, --profile_steps (cli/perf_flags.h)
}

// HF's model selection and EarlyStoppingCallback (train/model_selection.h).
void add_selection_flags(CLI::App& app, TrainFlags& f) {
  train::TrainOptions* o = &f.recipe.train;
  app.add_option("--metric_for_best_model", o->metric_for_best_model,
                 "The eval metric that picks the best checkpoint: loss, matching_accuracy, i2t_r1, ... (eval_ prefix "
                 "optional; default loss when --load_best_model_at_end or early stopping is on)");
  f.greater_is_better = app.add_flag("--greater_is_better", f.greater,
                                     "Whether a larger metric is better (default: true unless the metric ends in loss)");
  app.add_flag("--load_best_model_at_end", o->load_best_model_at_end,
               "The final model in --output_dir is the best checkpoint's (needs --save_strategy = --eval_strategy; "
               "--save_total_limit never deletes it)");
  app.add_option("--early_stopping_patience", o->early_stopping_patience,
                 "Stop after N evaluations without improvement of the metric (0: never; HF's EarlyStoppingCallback)")
      ->capture_default_str();
  app.add_option("--early_stopping_threshold", o->early_stopping_threshold,
                 "The improvement over the best that resets the patience (metric units)")->capture_default_str();
}

// A value quoted past the shell (--per_device_train_batch_size="40" from a launcher or a YAML list) reads as the
// value: the example's command works however it is passed.
void unquote_values(CLI::App& app) {
  for (CLI::Option* opt : app.get_options())
    if (opt->get_expected_max() > 0)
      opt->transform(
          [](std::string v) {
            if (v.size() >= 2 && (v[0] == '"' || v[0] == '\'') && v.back() == v[0]) v = v.substr(1, v.size() - 2);
            return v;
          },
          "", "");
}

void run(const CLI::App& app, const TrainFlags& f) {
  train::RecipeOptions recipe = f.recipe;
  train::TrainOptions& opts = recipe.train;
  std::string ignored;
  for (const CLI::Option* g : f.gaudi)
    if (g->count() > 0) ignored += (ignored.empty() ? "" : " ") + g->get_name();
  if (!ignored.empty()) std::printf("note: %s: Gaudi (HPU) settings, they do not apply here (ignored)\n", ignored.c_str());
  recipe.dataset.cache_dir = opts.cache_dir;
  recipe.arguments = arguments_of(app);
  // `bridgetune train` alone is the demo (`make demo`); any flag without a data flag is refused unless --demo
  // (train/run_settings.h): a user who names a model or an output folder meant their own data.
  if (recipe.arguments["bridgetune_given"].empty()) opts.demo = true;
  // What the command line says beyond the flags' values: a valueless --resume_from_checkpoint, --greater_is_better
  // given or not, and torchrun's RANK / WORLD_SIZE / MASTER_*.
  if (f.resume->count() > 0 && opts.resume_from_checkpoint.empty()) opts.resume_from_checkpoint = "latest";
  if (f.greater_is_better->count() > 0) opts.greater_is_better = f.greater ? 1 : 0;
  media::TransformSpec augment;  // the preset and its overrides resolved now: a bad mix fails before any loading
  media::apply_augment(opts.train_transform, augment);
  const dist::DistEnv env = dist::read_env();
  opts.rank = env.rank;
  opts.world_size = env.world_size;
  // A closed stdout or stderr (`train ... | head`) never ends a run: writes fail, training goes on. And a peer that
  // dies closes its sockets: without this, Gloo's next write kills us with SIGPIPE (exit 141, no message) instead
  // of failing the collective with a bt::Error that names the rank and the operation.
  std::signal(SIGPIPE, SIG_IGN);
  // A rank of torchrun's ends with its launcher (SIGKILLed, it can forward nothing): SIGTERM, as preemption, so
  // the ranks save and release the output folder's lock instead of training on as orphans.
  if (env.distributed() && std::getenv("LOCAL_RANK")) {
    const pid_t launcher = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != launcher) std::raise(SIGTERM);  // it died before the request took effect
  }
  train::install_stop_signals();  // SIGTERM / SIGINT / SIGUSR1: finish the step, save it, exit (train/stop_signal.h)
  train::run_recipe(recipe);
}

// Puts the options added since the first `from` (still in CLI11's default group) under `name` in --help.
void group_since(CLI::App& app, size_t from, const std::string& name) {
  const auto opts = app.get_options();
  for (size_t i = from; i < opts.size(); ++i)
    if (opts[i]->get_group() == "Options") opts[i]->group(name);
}

void setup(CLI::App& app) {
  auto f = std::make_shared<TrainFlags>();
  add_model_and_data_flags(app, *f);
  group_since(app, 1, group::kModelData);  // (0: --help)
  size_t n = app.get_options().size();
  add_hf_flags(app, *f);
  group_since(app, n, group::kHfRecipe);
  n = app.get_options().size();
  add_optimisation_flags(app, *f);
  group_since(app, n, group::kOptimisation);
  n = app.get_options().size();
  add_finetuning_flags(app, *f);
  group_since(app, n, group::kFineTuning);
  n = app.get_options().size();
  add_pipeline_and_runtime_flags(app, *f);
  group_since(app, n, group::kRuntime);
  n = app.get_options().size();
  add_selection_flags(app, *f);
  group_since(app, n, group::kSelection);
  app.add_option("--stop_after_step", f->recipe.hooks.stop_after_step, "Testing: stop after step N as if interrupted")->group("");
  app.add_flag("--test_loss_scaling", f->recipe.hooks.loss_scaling, "Testing: the fp16 loss scaler in fp32 on any device")->group("");
  app.add_option("--test_inject_nonfinite_at_step", f->recipe.hooks.inject_nonfinite_at_step,
                 "Testing: a NaN gradient at step N")->group("");
  add_hf_compat_flags(app);  // HF TrainingArguments without an effect here: a note, or refused with the reason
  unquote_values(app);
  app.callback([&app, f] { run(app, *f); });
}

const Registrar reg("train",
                    "Fine-tune BridgeTower contrastively on image-caption pairs (--demo, or no flag at all: the "
                    "built-in demo)",
                    30, setup);

}  // namespace
}  // namespace bt::cli
