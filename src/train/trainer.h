// `bridgetune train` as a library call: contrastive fine-tuning of BridgeTower with the Hugging Face example's
// knobs. Torch-free header (the loop lives in torch/trainer.cpp) so the CLI and bench code compile fast.
//
// Contract:
//  - Every check that can fail on user input (flags, model dir, dataset size, output dir holding a finished
//    run) runs before anything is written to output_dir.
//  - output_dir receives metrics.jsonl, training_plot.png, the final model (config.json, model.safetensors,
//    tokenizer files) and checkpoint-N/ folders (see checkpoint.h for their layout). Result files are the recipe's
//    (train/recipe.h), which calls run_train: train_results.json (from TrainSummary::results, written last: it
//    marks the run finished), all_results.json, trainer_state.json, the model card, ...
//  - With resume_from_checkpoint, the run continues at the saved step with the same data order, optimizer,
//    schedule and RNG state: the per-step losses equal those of an uninterrupted run.
//  - One optimizer step consumes gradient_accumulation_steps batches of per_device_train_batch_size rows on
//    each of world_size ranks; epochs hold floor(rows per rank / batch) batches (the short tail is dropped:
//    the contrastive loss wants full batches). The one rule: plan_steps (train/run_settings.h).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/defaults.h"
#include "eval/evaluate_run.h"
#include "loader/loader.h"
#include "media/augment.h"
#include "media/transform.h"
#include "model/attention_backend.h"
#include "model/lora_config.h"
#include "source/source.h"

namespace bt::train {

// HF's eval/save strategies: never, every N steps, or every epoch.
enum class IntervalStrategy { kNo, kSteps, kEpoch };
// --contrastive_accumulation with --gradient_accumulation_steps K > 1 (train/torch/contrastive_step.h). exact: the K
// micro-batches train as one batch of K x B (its negatives, its loss); local: HF's per-micro-batch losses, averaged.
enum class ContrastiveAccumulation { kExact, kLocal };
const char* accumulation_name(ContrastiveAccumulation a);  // "exact" | "local", as the flag spells it

// The user's `train` flags, exactly as given: nothing downstream changes them (training_args.json reports them). What
// a run makes of them -- the demo's recipe, HF's strategies as step intervals, --fp16's meaning on the device -- is
// resolved once into RunSettings (train/run_settings.h). Unset optionals: not given (run_settings.h has the defaults).
struct TrainOptions {
  // Model and data.
  std::string model_name_or_path;  // HF checkpoint dir or hub id (org/name, see hub/hub.h); empty: model_preset
  std::string model_revision = defaults::kHubRevision;  // hub ids: branch, tag or 40-hex commit in the local HF cache
  std::string cache_dir;                // hub ids: the HF hub cache (empty: $HF_HUB_CACHE, $HF_HOME/hub, ...)
  std::string model_preset = defaults::kModelPreset;
  std::string tokenizer_name;  // tokenizer folder (vocab.json + merges.txt or tokenizer.json): a preset model's, or
                               // instead of a checkpoint's own; empty: the checkpoint's, else a BPE trained on the
                               // training captions of tokenizer_vocab_size ids
  int tokenizer_vocab_size = defaults::kBpeVocabSize;
  std::string train_file, validation_file;  // captions file/folder, tar shards, or parquet (auto-detected)
  std::string train_shards;                 // WebDataset tar shards (pattern); alternative to train_file
  // --demo: the built-in demo (train/demo.h) on its generated data. Without it, training with no data is refused
  // (the CLI also sets it for `bridgetune train` given no flag at all: `make demo`'s command).
  bool demo = false;
  // Several --train_file (repeated, or a comma list): all of them in order, mixed with HF's interleave_datasets
  // semantics (source/mixed_source.h, loader/mix_order.h); train_file is then the first. Empty for one file.
  std::vector<std::string> train_mix_files;
  std::vector<double> train_mix_weights;  // --train_mix_weights: probabilities (normalised); empty: round-robin
  loader::MixStopping train_mix_stopping = loader::MixStopping::kFirstExhausted;
  int shuffle_window_row_groups = -1;       // parquet: shuffle row groups, then rows within windows of this many
                                            // groups (-1 default, 0 fully random rows)
  source::ReadOptions read;  // --image_column, --caption_column, --on_bad_sample, --max_image_bytes, --max_line_bytes
  std::string output_dir = "runs/train";
  bool overwrite_output_dir = false;
  bool resume_with_changed_data = false;  // resume a checkpoint made on other data (its fingerprint differs)
  // Optimisation.
  std::optional<int> per_device_train_batch_size;
  int per_device_eval_batch_size = eval::kDefaultEvalBatchSize;
  std::optional<double> learning_rate;
  double weight_decay = 0.0;
  double adam_beta1 = 0.9, adam_beta2 = 0.999, adam_epsilon = 1e-8;
  int64_t warmup_steps = 0;
  std::optional<double> warmup_ratio;
  std::string lr_scheduler_type = "linear";
  double num_train_epochs = 3;
  int64_t max_steps = -1;
  int gradient_accumulation_steps = 1;
  ContrastiveAccumulation contrastive_accumulation = ContrastiveAccumulation::kExact;
  bool gradient_checkpointing = false;  // recompute each layer's activations in backward (model/grad_checkpoint.h)
  double max_grad_norm = 1.0;
  // A step whose loss or gradient norm is not finite is never applied (skipped, counted); this many in a row stop
  // the run with one line (the weights, every checkpoint and the final model stay finite).
  int max_nonfinite_steps = 3;
  uint64_t seed = defaults::kSeed;
  bool freeze_vision_model = false, freeze_text_model = false, freeze_text_pooler = true;
  // Fine-tuning controls (train/torch/param_setup.h): per-part learning rates (unset: --learning_rate's; 0 is a
  // rate of 0: the part stays as loaded), layer-wise decay across each tower's depth (1: none), the first N layers
  // of a tower frozen (embeddings + N blocks).
  std::optional<double> vision_learning_rate, text_learning_rate, cross_modal_learning_rate;
  double layer_decay = 1.0;
  int freeze_vision_layers = 0, freeze_text_layers = 0;
  // The contrastive loss's temperature and labels: logit_scale's starting value (the log of the inverse
  // temperature; unset: the checkpoint's or the config's logit_scale_init_value), its bound exp(logit_scale) <=
  // logit_scale_max after every step (0: none; CLIP's 100), frozen, and label smoothing of each cross-entropy.
  std::optional<double> logit_scale_init;
  double logit_scale_max = 0;
  bool freeze_logit_scale = false;
  double label_smoothing = 0;
  // LoRA (model/lora.h): rank 0 trains every parameter; rank r > 0 trains rank-r updates of the target Linear
  // layers and the modules_to_save only (the rest frozen, logit_scale too), and the output folder gets PEFT's
  // adapter files beside the base weights; merge_lora folds the updates into a plain checkpoint instead.
  int lora_rank = 0;
  double lora_alpha = 16, lora_dropout = 0;
  std::string lora_target_modules = model::kDefaultLoraTargets;
  std::string lora_modules_to_save = model::kDefaultLoraModulesToSave;
  bool merge_lora = false;
  // unset: defaults::kMaxSeqLength capped to the model's text positions; given: refused past them (before any
  // step; model/config.h resolve_max_seq_length)
  std::optional<int> max_seq_length;
  // Data pipeline.
  int dataloader_num_workers = defaults::kNumWorkers;
  int prefetch_batches = defaults::kPrefetchBatches;
  int image_size = 0;  // 0: the model config's vision image_size
  bool dedupe_images_in_batch = loader::kDedupeImagesInBatchByDefault;
  bool use_media_pipeline = false;
  loader::MediaDecode media_decode = loader::MediaDecode::kAuto;  // with use_media_pipeline
  media::AugmentOptions train_transform;  // --train_transform preset + overrides; eval: the reference's resize + crop
  int decoded_cache_mb = defaults::kDecodedCacheMb;
  bool jpeg_dct_scaling = true;
  uint64_t max_image_pixels = media::kDefaultMaxImagePixels;  // --max_image_pixels: larger images are refused
  // Runtime.
  std::string device = defaults::kDevice;
  bool bf16 = false;
  bool fp16 = false;  // --fp16: on CUDA fp16 autocast + dynamic loss scaling (train/loss_scale.h), elsewhere bf16
  int torch_threads = 0;  // 0: model::torch_threads_for (on CPU every core from the small preset up, else what the workers leave)
  // Issue 46: attention's kernel (model/attention_backend.h); the decode workers' nice value (-1: auto,
  // loader::default_worker_nice) and CPUs (loader/worker_priority.h); the steps "A:B" torch's profiler traces into
  // output_dir ("": none; train/torch/step_profiler.h).
  model::AttentionOverride attention_backend = model::AttentionOverride::kAuto;
  int loader_worker_nice = -1;
  bool loader_worker_affinity = false;
  std::string profile_steps;
  uint64_t max_model_bytes = 0;  // 0: the machine's free memory (model/memory_budget.h)
  // Logging, eval, checkpoints. --eval_steps/--save_steps < 0: each epoch; a strategy, when given, decides.
  std::optional<int64_t> logging_steps, eval_steps, save_steps;
  std::optional<IntervalStrategy> eval_strategy, save_strategy;
  int64_t save_total_limit = 0;
  int64_t max_train_samples = 0, max_eval_samples = 0;  // > 0: only the first N rows of the split (HF's select)
  // Model selection (train/model_selection.h, HF's names): "" = none; greater_is_better -1 = by the metric's name.
  std::string metric_for_best_model;
  int greater_is_better = -1;
  bool load_best_model_at_end = false;
  int64_t early_stopping_patience = 0;  // evaluations without improvement before stopping (0: never stop early)
  double early_stopping_threshold = 0;  // the improvement that counts
  std::string resume_from_checkpoint;  // "", "latest" or a checkpoint dir
  int64_t throughput_warmup_steps = 3;
  std::optional<double> dropout;  // >= 0: overrides the model's hidden/attention dropout (0: deterministic steps)
  // Distributed (filled from the torchrun environment by the CLI; see dist/env.h). Only rank 0 writes.
  int rank = 0, world_size = 1;
  double ddp_timeout = 1800;       // seconds for the rendezvous and every collective
  bool gather_embeddings = false;  // contrastive negatives span the global batch (OpenCLIP's gather-with-grad)
};

// What run_train's caller decides beyond the user's flags: the recipe (train/recipe.h) resolves --dataset_name's
// splits, HF's phases and --report_to; bench turns the final evaluation off. Defaults: the flags alone decide.
struct TrainInputs {
  // The training split when the caller resolved it: the path read and how errors name it ("--dataset_name
  // org/name (split train)"). Empty: --train_file / --train_shards.
  std::string train_path, train_named;
  std::optional<std::string> validation_path;  // unset: --validation_file; "": no validation split
  bool train = true;            // false: the caller only evaluates (the recipe without --do_train): never the demo
  bool eval_at_end = true;      // evaluate the validation split after the last step
  bool media_pipeline = false;  // the GPU media pipeline where the caller found it can run (--mediapipe_dataloader)
  std::string tensorboard_dir;  // non-empty: the run log's records also become TensorBoard scalars there
};

// What bench and the tests change about a run beyond the user's options (not flags of `train`, except the
// hidden --stop_after_step that the kill/resume tests use).
struct TrainHooks {
  int in_memory_batches = 0;      // > 0: load this many batches once and cycle them (bench's upper bound)
  bool quiet = false;             // no console output (bench)
  bool write_plot = true;         // training_plot.png
  bool save_final_model = true;   // the final model in output_dir (bench measures without it)
  int64_t stop_after_step = -1;   // stop right after step N (after its checkpoint) as if killed: no final outputs
  bool loss_scaling = false;       // the fp16 loss scaler on any device (fp32 compute): its logic, testable on CPU
  int64_t inject_nonfinite_at_step = -1;  // step N's gradients get a NaN (the scaler or the divergence guard skips it)
};

struct TrainSummary {
  double train_samples_per_second = 0, train_runtime = 0, train_loss = 0, final_loss = 0;
  double data_wait_percent = 0, first_loss = 0;
  int64_t train_samples = 0, global_step = 0;
  double eval_loss = -1;  // < 0: no eval ran
  std::string output_dir;
  int64_t max_steps = 0, steps_per_epoch = 0;
  int64_t eval_steps = 0, save_steps = 0;  // the intervals run (HF's epoch strategy resolved to its steps; 0: none)
  bool completed = false;  // false: stopped early (stop_after_step), no final outputs written
  // Model selection: the best evaluation's value ("null" when none), its checkpoint folder ("" when none was
  // saved), and why early stopping ended the run ("" when it did not).
  nlohmann::json best_metric;
  std::string best_model_checkpoint, early_stop_reason;
  // Memory of the step loop (model/device.h: resident memory on the CPU, allocated memory on CUDA), in bytes: its
  // peak, and that peak above what the loop started with (the loaded model, optimizer state and data around it).
  uint64_t peak_memory_bytes = 0, step_memory_bytes = 0;
  std::string op_paths;    // which fast paths ran: "adamw fused, quick_gelu cuda_kernel" (bench rows record it)
  // bridgetune's keys of train_results.json (throughput, losses, the last evaluation, model selection, the demo's
  // before/after scores); the recipe adds HF's and writes the file.
  nlohmann::json results;
};

struct RunSettings;  // train/run_settings.h

// settings: resolve_settings(options, inputs) (the recipe resolves once and passes them); the short form resolves
// them from the flags alone.
TrainSummary run_train(const TrainOptions& options, const RunSettings& settings, const TrainHooks& hooks = {});
TrainSummary run_train(const TrainOptions& options, const TrainHooks& hooks = {}, const TrainInputs& inputs = {});

}  // namespace bt::train
