// `bridgetune train`: contrastive fine-tuning with the Hugging Face example's flags (see train/trainer.h and, for
// --do_train/--do_eval/--do_predict, --dataset_name and the HF result files, train/recipe.h). The example's command
// runs as pasted: its Gaudi-only flags are accepted with one line saying they do not apply. Without data flags it
// runs the embedded demo: generated cartoons, the tiny preset, a BPE vocabulary built from the captions, a short
// real training run.
#include <array>
#include <filesystem>
#include <csignal>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/command.h"
#include "cli/hf_compat.h"
#include "cli/hub_flags.h"
#include "cli/model_flags.h"
#include "common/error.h"
#include "common/file_gate.h"
#include "data/captions_dataset.h"
#include "dist/env.h"
#include "train/embed_index.h"
#include "train/recipe.h"
#include "train/trainer.h"

namespace bt::cli {
namespace {

namespace fs = std::filesystem;

// The HF example's flags bridgetune accepts without a use (Gaudi/HPU settings): value-taking ones and switches.
const char* const kGaudiOptions[] = {"--gaudi_config_name", "--distribution_strategy"};
const char* const kGaudiFlags[] = {"--use_habana", "--use_lazy_mode", "--use_hpu_graphs_for_inference",
                                   "--use_hpu_graphs_for_training", "--sdp_on_bf16", "--pipelining_fwd_bwd",
                                   "--non_blocking_data_copy"};

// The run's arguments as JSON (training_args.json): every flag with the value it had, typed as far as the text
// tells (numbers, true/false, strings).
nlohmann::json arguments_of(const CLI::App& app) {
  nlohmann::json j = nlohmann::json::object();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_lnames().empty() || opt->get_group().empty() || opt->get_lnames()[0] == "help") continue;
    const std::string name = opt->get_lnames()[0];
    std::string v = opt->count() > 0 && !opt->results().empty() ? opt->results().back() : opt->get_default_str();
    if (opt->get_expected_max() == 0) {  // a switch (--flag, --flag=False)
      j[name] = opt->count() > 0 && (opt->results().empty() || CLI::detail::to_flag_value(opt->results().back()) > 0);
      continue;
    }
    if (opt->get_type_name() == "BOOLEAN") {  // a bool option (--jpeg_dct_scaling false): JSON true/false, not 1/0
      j[name] = CLI::detail::to_flag_value(v) > 0;
      continue;
    }
    auto parsed = nlohmann::json::parse(v, nullptr, false);
    j[name] = !parsed.is_discarded() && (parsed.is_number() || parsed.is_boolean()) ? parsed : nlohmann::json(v);
  }
  return j;
}

// training_args.json records the run as it ran: the values after the demo's defaults, the strategies and the
// aliases (--fp16 -> bf16), with HF's key names and JSON types, over the flags as given.
nlohmann::json effective_arguments(nlohmann::json j, const train::TrainOptions& o, bool demo) {
  j["learning_rate"] = o.learning_rate;
  j["per_device_train_batch_size"] = o.per_device_train_batch_size;
  j["per_device_eval_batch_size"] = o.per_device_eval_batch_size;
  j["num_train_epochs"] = o.num_train_epochs;
  j["max_steps"] = o.max_steps;
  j["warmup_ratio"] = o.warmup_ratio;
  j["warmup_steps"] = o.warmup_steps;
  j["logging_steps"] = o.logging_steps;
  auto strategy = [](int64_t steps) { return steps == 0 ? "no" : steps < 0 ? "epoch" : "steps"; };
  j["eval_strategy"] = strategy(o.eval_steps);
  j["eval_steps"] = o.eval_steps > 0 ? nlohmann::json(o.eval_steps) : nlohmann::json(nullptr);
  j["save_strategy"] = strategy(o.save_steps);
  j["save_steps"] = o.save_steps > 0 ? nlohmann::json(o.save_steps) : nlohmann::json(nullptr);
  j["bf16"] = o.bf16;
  j["fp16"] = o.fp16;  // on CPU --fp16 runs as bf16 autocast (bf16 true)
  j["dropout"] = o.dropout;
  j["seed"] = o.seed;
  j["resume_from_checkpoint"] = o.resume_from_checkpoint.empty() ? nlohmann::json(nullptr)
                                                                  : nlohmann::json(o.resume_from_checkpoint);
  j["world_size"] = o.world_size;
  j["contrastive_accumulation"] = o.contrastive_accumulation;
  j["gradient_checkpointing"] = o.gradient_checkpointing;
  j["metric_for_best_model"] = o.metric_for_best_model.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.metric_for_best_model);
  j["greater_is_better"] = o.greater_is_better < 0 ? nlohmann::json(nullptr) : nlohmann::json(o.greater_is_better == 1);
  j["load_best_model_at_end"] = o.load_best_model_at_end;
  j["bridgetune_demo"] = demo;
  j["bridgetune_version"] = BT_VERSION;
  return j;
}

// What the callback needs beyond the options themselves: which flags were given, and the values of the flags that
// map onto others (strategies, --fp16, the Gaudi-only ones).
struct TrainFlags {
  train::RecipeOptions recipe;
  CLI::Option *resume = nullptr, *caption_column = nullptr, *batch_size = nullptr, *learning_rate = nullptr,
              *warmup_ratio = nullptr, *epochs = nullptr, *max_steps = nullptr, *logging_steps = nullptr,
              *eval_steps = nullptr, *save_steps = nullptr, *dropout = nullptr, *eval_strategy = nullptr,
              *save_strategy = nullptr, *greater_is_better = nullptr;
  std::array<std::string, 2> strategies;  // --eval_strategy, --save_strategy
  bool fp16 = false, trust_remote_code = false, remove_unused_columns = true, greater = false;
  std::vector<std::string> gaudi_values = std::vector<std::string>(std::size(kGaudiOptions));
  std::vector<CLI::Option*> gaudi;
};

void add_model_and_data_flags(CLI::App& app, TrainFlags& f) {
  train::RecipeOptions* r = &f.recipe;
  train::TrainOptions* o = &r->train;
  f.resume = app.add_option("--resume_from_checkpoint", o->resume_from_checkpoint,
                                   "Continue a run: a checkpoint-N folder, or 'latest' (default when no value)")
                        ->expected(0, 1);
  app.add_option("--model_name_or_path", o->model_name_or_path, "HF checkpoint folder (config.json, model.safetensors or pytorch_model.bin, tokenizer files) or hub id (org/name) in the local HF cache");
  add_hub_flags(app, &o->model_revision, &o->cache_dir);
  app.add_option("--model_preset", o->model_preset, "Random-init shapes when no checkpoint: tiny|small|base|large")->capture_default_str();
  app.add_option("--tokenizer_name", o->tokenizer_name,
                 "Tokenizer folder or hub id (vocab.json + merges.txt, or tokenizer.json) for a --model_preset model; its vocabulary "
                 "sizes the text embeddings (default: a small BPE trained on the captions)");
  app.add_option("--train_file", o->train_file, "Captions file (JSONL/CSV), image folder with captions.jsonl, HF parquet (file, folder, glob) or tar shards; none: built-in demo data");
  app.add_option("--train_shards", o->train_shards, "WebDataset tar shards: a .tar, a glob, a brace pattern (shard-{000..009}.tar) or a folder");
  app.add_option("--shuffle_window_row_groups", o->shuffle_window_row_groups,
                 "parquet: shuffle row groups, then rows within windows of K groups so each decoded page serves all "
                 "its rows (-1: 8, capped to the page cache; 0: fully random rows)");
  app.add_option("--validation_file", o->validation_file, "Validation split (same forms) for eval loss and recall@K");
  app.add_option("--test_file", r->test_file, "Test split (same forms) for --do_predict");
  app.add_option("--dataset_name", r->dataset.name, "HF dataset: hub id in the local HF cache (e.g. jmhessel/newyorker_caption_contest) or a folder of the same layout; splits train/validation/test feed --do_train/--do_eval/--do_predict");
  app.add_option("--dataset_config_name", r->dataset.config, "Its config (e.g. matching)");
  app.add_option("--dataset_revision", r->dataset.revision, "Hub datasets: branch, tag or commit")->capture_default_str();
  app.add_option("--image_column", o->image_column, "Image column of a CSV/JSONL/parquet dataset")->capture_default_str();
  f.caption_column = app.add_option("--caption_column", o->caption_column, "Caption column (parquet default: image_description, as the HF New Yorker set)")->capture_default_str();
  app.add_option("--output_dir", o->output_dir, "Where checkpoints, the final model and the result files go")->capture_default_str();
  app.add_flag("--overwrite_output_dir", o->overwrite_output_dir, "Replace a finished or interrupted run in --output_dir");
}

// The HF example's flags that select phases and outputs, and the ones accepted for it without a use here.
void add_hf_flags(CLI::App& app, TrainFlags& f) {
  train::RecipeOptions* r = &f.recipe;
  train::TrainOptions* o = &r->train;
  app.add_flag("--do_train", r->do_train, "Train (HF semantics: without it nothing trains; none of --do_train/--do_eval/--do_predict: train, evaluating on --validation_file)");
  app.add_flag("--do_eval", r->do_eval, "Evaluate on the validation split after training (or the given model)");
  app.add_flag("--do_predict", r->do_predict, "Evaluate on the test split (test_results.json, metric prefix test)");
  app.add_option("--max_train_samples", o->max_train_samples, "Only the first N training rows (0: all)")->capture_default_str();
  app.add_option("--max_eval_samples", o->max_eval_samples, "Only the first N validation rows (0: all)")->capture_default_str();
  app.add_option("--max_predict_samples", r->max_predict_samples, "Only the first N test rows (0: all)")->capture_default_str();
  app.add_option("--report_to", r->report_to, "none|tensorboard|all (all = tensorboard: the only integration)")->capture_default_str();
  app.add_option("--logging_dir", r->logging_dir, "TensorBoard event files (default OUTPUT_DIR/runs/<Mon DD_HH-MM-SS>_<host>)");
  app.add_flag("--remove_unused_columns", f.remove_unused_columns, "Accepted for the HF example (=False as it passes); bridgetune reads only the image and caption columns either way");
  f.eval_strategy = app.add_option("--eval_strategy,--evaluation_strategy", f.strategies[0], "no|steps|epoch: evaluate during training (steps: every --eval_steps, default --logging_steps)");
  f.save_strategy = app.add_option("--save_strategy", f.strategies[1], "no|steps|epoch: checkpoints (steps: every --save_steps, default 500)");
  app.add_flag("--fp16", f.fp16, "Mixed precision: on CUDA fp16 autocast with dynamic loss scaling (for GPUs without bf16); on CPU bf16 autocast (--bf16)");
  app.add_flag("--trust_remote_code", f.trust_remote_code, "Accepted for the HF example; bridgetune never executes code from a model or dataset repository");
  for (size_t i = 0; i < std::size(kGaudiOptions); ++i)
    f.gaudi.push_back(app.add_option(kGaudiOptions[i], f.gaudi_values[i], "Gaudi (HPU) only: accepted, does not apply")->group("Gaudi-only (accepted, ignored)"));
  const std::string gaudi_desc = "Gaudi (HPU) only: accepted, does not apply";
  for (const char* name : kGaudiFlags) f.gaudi.push_back(app.add_flag(std::string(name), gaudi_desc)->group("Gaudi-only (accepted, ignored)"));
}

void add_optimisation_flags(CLI::App& app, TrainFlags& f) {
  train::TrainOptions* o = &f.recipe.train;
  f.batch_size = app.add_option("--per_device_train_batch_size", o->per_device_train_batch_size, "Training batch per process (images)")->capture_default_str();
  app.add_option("--per_device_eval_batch_size", o->per_device_eval_batch_size, "Evaluation batch per process (images)")->capture_default_str();
  f.learning_rate = app.add_option("--learning_rate", o->learning_rate, "Peak AdamW learning rate (after warm-up)")->capture_default_str();
  app.add_option("--weight_decay", o->weight_decay, "AdamW weight decay (not on biases and LayerNorm weights, as HF)")->capture_default_str();
  app.add_option("--adam_beta1", o->adam_beta1, "AdamW beta1")->capture_default_str();
  app.add_option("--adam_beta2", o->adam_beta2, "AdamW beta2")->capture_default_str();
  app.add_option("--adam_epsilon", o->adam_epsilon, "AdamW epsilon")->capture_default_str();
  app.add_option("--warmup_steps", o->warmup_steps, "Linear warm-up steps (overrides --warmup_ratio when > 0)")->capture_default_str();
  f.warmup_ratio = app.add_option("--warmup_ratio", o->warmup_ratio, "Warm-up as a fraction of the total steps")->capture_default_str();
  app.add_option("--lr_scheduler_type", o->lr_scheduler_type, "linear|cosine|constant|constant_with_warmup")->capture_default_str();
  f.epochs = app.add_option("--num_train_epochs", o->num_train_epochs, "Epochs (fractions allowed) when --max_steps <= 0")->capture_default_str();
  f.max_steps = app.add_option("--max_steps", o->max_steps, "Optimizer steps (overrides --num_train_epochs when > 0)")->capture_default_str();
  app.add_option("--gradient_accumulation_steps", o->gradient_accumulation_steps, "Micro-batches per optimizer step (see --contrastive_accumulation)")->capture_default_str();
  app.add_option("--contrastive_accumulation", o->contrastive_accumulation,
                 "With --gradient_accumulation_steps K: exact (one loss over all K x B rows: the weights a batch of "
                 "K x B trains, one extra forward per micro-batch) | local (HF: each micro-batch its own negatives)")
      ->capture_default_str();
  app.add_flag("--gradient_checkpointing", o->gradient_checkpointing,
               "Recompute each layer's activations in backward: less memory for one more forward (same gradients)");
  app.add_option("--max_grad_norm", o->max_grad_norm, "Clip the total gradient norm (<= 0: off)")->capture_default_str();
  app.add_option("--seed", o->seed, "Seed of the initialisation, the data order, the crops and dropout")->capture_default_str();
  app.add_flag("--freeze_vision_model", o->freeze_vision_model, "Train without updating the vision tower");
  app.add_flag("--freeze_text_model", o->freeze_text_model, "Train without updating the text tower");
  app.add_option("--freeze_text_pooler", o->freeze_text_pooler, "true|false")->capture_default_str();
}

void add_pipeline_and_runtime_flags(CLI::App& app, TrainFlags& f) {
  train::RecipeOptions* r = &f.recipe;
  train::TrainOptions* o = &r->train;
  app.add_option("--max_seq_length", o->max_seq_length, "Caption truncation (tokens)")->capture_default_str();
  app.add_option("--dataloader_num_workers", o->dataloader_num_workers, "Loader threads (0: load in the step loop)")->capture_default_str();
  app.add_option("--prefetch_batches", o->prefetch_batches, "Batches the loader keeps ready ahead of the step")->capture_default_str();
  app.add_option("--image_size", o->image_size, "0: the model's vision image_size")->capture_default_str();
  app.add_option("--dedupe_images_in_batch", o->dedupe_images_in_batch, "true|false: keep repeated images out of one batch")->capture_default_str();
  app.add_flag("--use_media_pipeline", o->use_media_pipeline, "Decode/resize on the GPU (CUDA builds, --device cuda)");
  app.add_option("--media_decode", o->media_decode,
                 "With --use_media_pipeline: auto (nvJPEG's hardware decoder when present) | gpu (nvJPEG; "
                 "progressive/CMYK/gray JPEGs and PNGs still decode on the CPU) | cpu")->capture_default_str();
  app.add_flag("--use_habana_media_pipeline,--mediapipe_dataloader", r->media_pipeline_where_possible,
               "The Gaudi examples' names of --use_media_pipeline: on where it can run, else one line and the CPU loader");
  app.add_option("--train_transform", o->train_transform, "eval (resize + center crop, as the reference) | train (random crop + flip)")->capture_default_str();
  app.add_option("--on_bad_sample", o->on_bad_sample, "error|skip")->capture_default_str();
  app.add_option("--max_image_bytes", o->max_image_bytes, "Refuse larger image files and tar members before reading them")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--max_line_bytes", o->max_line_bytes, "Refuse a longer JSONL line or CSV record (a caption file's rows take a few KB)")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--decoded_cache_mb", o->decoded_cache_mb, "Cache of transformed crops of repeated images (0: off)")->capture_default_str();
  app.add_option("--jpeg_dct_scaling", o->jpeg_dct_scaling, "true|false")->capture_default_str();
  app.add_option("--device", o->device, "cpu|cuda")->capture_default_str();
  bt::cli::add_model_memory_flag(app, &o->max_model_bytes);
  app.add_option("--ddp_timeout", o->ddp_timeout, "Multi-process: seconds a rank waits for the others (rendezvous, each collective)")->capture_default_str();
  app.add_flag("--gather_embeddings", o->gather_embeddings, "Multi-process: contrastive negatives over the global batch (all-gather with gradient)");
  f.dropout = app.add_option("--dropout", o->dropout, "Override the model's hidden/attention dropout (< 0: the config's)")->capture_default_str();
  app.add_flag("--bf16", o->bf16, "bf16 autocast (CUDA; CPU where libtorch supports it)");
  app.add_option("--torch_threads", o->torch_threads, "Intra-op threads (0: cores left by the loader workers, at least 1)")->capture_default_str();
  f.logging_steps = app.add_option("--logging_steps", o->logging_steps, "Log the mean loss every N steps")->capture_default_str();
  f.eval_steps = app.add_option("--eval_steps", o->eval_steps, "0: eval only at the end")->capture_default_str();
  f.save_steps = app.add_option("--save_steps", o->save_steps, "Checkpoint every N steps (0: none)")->capture_default_str();
  app.add_option("--save_total_limit", o->save_total_limit, "Keep the newest N checkpoints (0: all)")->capture_default_str();
  app.add_option("--throughput_warmup_steps", o->throughput_warmup_steps, "Steps left out of train_samples_per_second")->capture_default_str();
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

// The embedded demo's recipe, unless set explicitly: a tiny model from scratch wants a large learning rate and no
// dropout; 3 epochs of 6000 rows (~560 steps, about a minute and a half on 2 cores) take held-out matching from
// chance (0.2) to ~0.8 and retrieval R@1 from chance (1/32) to ~0.5 (docs/PERFORMANCE.md).
void apply_demo_defaults(const TrainFlags& f, train::TrainOptions& opts) {
  if (!opts.validation_file.empty()) fail("--validation_file needs --train_file (the demo makes its own split)");
  if (f.batch_size->count() == 0) opts.per_device_train_batch_size = 32;
  if (f.learning_rate->count() == 0) opts.learning_rate = 1e-3;
  if (f.warmup_ratio->count() == 0) opts.warmup_ratio = 0.05;
  if (f.dropout->count() == 0) opts.dropout = 0;
  if (f.epochs->count() == 0 && f.max_steps->count() == 0) opts.num_train_epochs = 3;
  if (f.logging_steps->count() == 0) opts.logging_steps = 20;
  if (f.eval_steps->count() == 0) opts.eval_steps = 187;
  if (f.save_steps->count() == 0) opts.save_steps = 187;
}

// HF's strategies onto the step intervals (eval/save_steps < 0: each epoch), over the demo's defaults.
void apply_strategies(const TrainFlags& f, train::TrainOptions& opts) {
  auto strategy = [](const std::string& v, const char* flag, int64_t* steps, int64_t steps_default) {
    if (v == "no") *steps = 0;
    else if (v == "epoch") *steps = -1;
    else if (v == "steps") *steps = *steps > 0 ? *steps : steps_default;
    else fail(flag, " must be no, steps or epoch (got '", v, "')");
  };
  if (f.eval_strategy->count() > 0) strategy(f.strategies[0], "--eval_strategy", &opts.eval_steps, opts.logging_steps);
  if (f.save_strategy->count() > 0) strategy(f.strategies[1], "--save_strategy", &opts.save_steps, 500);
}

// The demo ends by using its model: the held-out pictures become a search index, and one held-out description
// (the caption without its joke) finds its pictures, as `bridgetune encode` / `bridgetune search` would.
void use_the_demo_model(const train::TrainOptions& o) {
  const fs::path out(o.output_dir), index = out / "demo_index";
  train::EncodeOptions eo;
  eo.model_name_or_path = out.string();
  eo.data = (out / "demo_data" / "validation").string();
  eo.output_dir = index.string();
  eo.dataloader_num_workers = o.dataloader_num_workers;
  eo.device = o.device;
  eo.bf16 = o.bf16;
  eo.quiet = true;
  std::printf("\n***** using the model: bridgetune encode + search on the held-out pictures *****\n");
  train::run_encode(eo);
  const std::string texts = read_small_file((index / "texts.jsonl").string(), 1ull << 30);
  const nlohmann::json first = nlohmann::json::parse(texts.substr(0, texts.find('\n')), nullptr, false);
  std::string query = first.is_object() ? first.value("text", "") : "";
  query = query.substr(0, query.find('"'));
  while (!query.empty() && query.back() == ' ') query.pop_back();
  train::SearchOptions so;
  so.index = index.string();
  so.query = query;
  so.top_k = 3;
  so.contact_sheet = (out / "demo_search.png").string();
  so.device = o.device;
  std::printf("query: %s\n", query.c_str());
  train::run_search(so);
  std::printf("try it: %s search --index %s --query \"a teal balloon at the top centre\"\n",
              "bridgetune", index.c_str());
  std::fflush(stdout);
}

void run(const CLI::App& app, const TrainFlags& f) {
  train::RecipeOptions recipe = f.recipe;
  train::TrainOptions& opts = recipe.train;
  std::string ignored;
  for (const CLI::Option* g : f.gaudi)
    if (g->count() > 0) ignored += (ignored.empty() ? "" : " ") + g->get_name();
  if (!ignored.empty()) std::printf("note: %s: Gaudi (HPU) settings, they do not apply here (ignored)\n", ignored.c_str());
  if (f.fp16 && !opts.bf16) {
    if (opts.device.rfind("cuda", 0) == 0) {
      opts.fp16 = true;  // fp16 autocast + dynamic loss scaling (GPUs without bf16: V100, T4)
      std::printf("note: --fp16: fp16 autocast with dynamic loss scaling (inf/NaN steps are skipped)\n");
    } else {
      std::printf("note: --fp16: on CPU this build's mixed precision is bf16 autocast; using it (as --bf16)\n");
      opts.bf16 = true;
    }
  }
  recipe.caption_column_given = f.caption_column->count() > 0;
  recipe.dataset.cache_dir = opts.cache_dir;
  recipe.arguments = arguments_of(app);
  if (f.resume->count() > 0 && opts.resume_from_checkpoint.empty()) opts.resume_from_checkpoint = "latest";
  const dist::DistEnv env = dist::read_env();  // torchrun's RANK / WORLD_SIZE / MASTER_*
  opts.rank = env.rank;
  opts.world_size = env.world_size;
  // A peer that dies closes its sockets: without this, Gloo's next write kills us with SIGPIPE (exit 141, no
  // message) instead of failing the collective with a bt::Error that names the rank and the operation.
  if (env.distributed()) std::signal(SIGPIPE, SIG_IGN);
  const bool data_given = !opts.train_file.empty() || !opts.train_shards.empty() || !recipe.dataset.name.empty();
  const bool demo = !data_given && (recipe.do_train || !(recipe.do_eval || recipe.do_predict));
  if (demo) apply_demo_defaults(f, opts);
  apply_strategies(f, opts);
  if (f.greater_is_better->count() > 0) opts.greater_is_better = f.greater ? 1 : 0;
  // HF saves every 500 steps by default, so its best-model rule (saves where evaluations are) holds out of the box;
  // bridgetune saves nothing by default: with --load_best_model_at_end and no save flags, save at each evaluation.
  if (opts.load_best_model_at_end && f.save_strategy->count() == 0 && f.save_steps->count() == 0 && opts.save_steps == 0 &&
      opts.eval_steps != 0) {
    opts.save_steps = opts.eval_steps;
    if (opts.rank == 0)
      std::printf("note: --load_best_model_at_end: a checkpoint at every evaluation (--save_strategy as --eval_strategy)\n");
  }
  recipe.arguments = effective_arguments(std::move(recipe.arguments), opts, demo);
  train::run_recipe(recipe);
  const fs::path out(opts.output_dir);
  if (demo && opts.rank == 0 && !recipe.hooks.quiet && fs::exists(out / "train_results.json")) use_the_demo_model(opts);
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
  group_since(app, 1, "Model & data");  // (0: --help)
  size_t n = app.get_options().size();
  add_hf_flags(app, *f);
  group_since(app, n, "HF recipe: phases, outputs, strategies");
  n = app.get_options().size();
  add_optimisation_flags(app, *f);
  group_since(app, n, "Optimisation & schedule");
  n = app.get_options().size();
  add_pipeline_and_runtime_flags(app, *f);
  group_since(app, n, "Loader, media pipeline, runtime, logging & checkpoints");
  n = app.get_options().size();
  add_selection_flags(app, *f);
  group_since(app, n, "Evaluation & model selection");
  app.add_option("--stop_after_step", f->recipe.hooks.stop_after_step, "Testing: stop after step N as if interrupted")->group("");
  app.add_flag("--test_loss_scaling", f->recipe.hooks.loss_scaling, "Testing: the fp16 loss scaler in fp32 on any device")->group("");
  app.add_option("--test_inject_nonfinite_at_step", f->recipe.hooks.inject_nonfinite_at_step,
                 "Testing: a NaN gradient at step N")->group("");
  add_hf_compat_flags(app);  // HF TrainingArguments without an effect here: a note, or refused with the reason
  unquote_values(app);
  app.callback([&app, f] { run(app, *f); });
}

const Registrar reg("train", "Fine-tune BridgeTower contrastively on image-caption pairs (no data flags: built-in demo)",
                    30, setup);

}  // namespace
}  // namespace bt::cli
