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
//    the contrastive loss wants full batches).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "data/captions_parse.h"
#include "eval/evaluate_run.h"
#include "loader/sampler.h"

namespace bt::train {

struct TrainOptions {
  // Model and data.
  std::string model_name_or_path;  // HF checkpoint dir or hub id (org/name, see hub/hub.h); empty: model_preset
  std::string model_revision = "main";  // hub ids: branch, tag or 40-hex commit in the local HF cache
  std::string cache_dir;                // hub ids: the HF hub cache (empty: $HF_HUB_CACHE, $HF_HOME/hub, ...)
  std::string model_preset = "tiny";
  std::string tokenizer_name;  // tokenizer folder (vocab.json + merges.txt or tokenizer.json) for a preset model;
                               // empty: the checkpoint's, else a small BPE trained on the training captions
  std::string train_file, validation_file;  // captions file/folder, tar shards, or parquet (auto-detected)
  std::string train_shards;                 // WebDataset tar shards (pattern); alternative to train_file
  int shuffle_window_row_groups = -1;       // parquet: shuffle row groups, then rows within windows of this many
                                            // groups (-1 default, 0 fully random rows)
  std::string image_column = "image", caption_column = "caption";
  std::string output_dir = "runs/train";
  bool overwrite_output_dir = false;
  // Optimisation.
  int per_device_train_batch_size = 16, per_device_eval_batch_size = eval::kDefaultEvalBatchSize;
  double learning_rate = 5e-5, weight_decay = 0.0;
  double adam_beta1 = 0.9, adam_beta2 = 0.999, adam_epsilon = 1e-8;
  int64_t warmup_steps = 0;
  double warmup_ratio = 0.0;
  std::string lr_scheduler_type = "linear";
  double num_train_epochs = 3;
  int64_t max_steps = -1;
  int gradient_accumulation_steps = 1;
  // exact: K micro-batches train as one batch of K x B (its negatives, its loss; train/torch/contrastive_step.h);
  // local: HF's per-micro-batch losses, averaged.
  std::string contrastive_accumulation = "exact";
  bool gradient_checkpointing = false;  // recompute each layer's activations in backward (model/grad_checkpoint.h)
  double max_grad_norm = 1.0;
  uint64_t seed = 42;
  bool freeze_vision_model = false, freeze_text_model = false, freeze_text_pooler = true;
  int max_seq_length = 128;
  // Data pipeline.
  int dataloader_num_workers = 2;
  int prefetch_batches = 4;
  int image_size = 0;  // 0: the model config's vision image_size
  bool dedupe_images_in_batch = loader::kDedupeImagesInBatchByDefault;
  bool use_media_pipeline = false;
  // With use_media_pipeline: auto (nvJPEG's hardware decoder when present) | gpu (nvJPEG) | cpu (the loader's
  // DCT-scaled decode). Device-decoded JPEGs are resized from full resolution (nvJPEG has no DCT scaling).
  std::string media_decode = "auto";
  std::string train_transform = "eval";  // eval (the reference example: resize + center crop) | train (random)
  std::string on_bad_sample = "error";
  uint64_t max_image_bytes = data::kDefaultMaxImageBytes;  // larger image files / tar members are bad samples
  uint64_t max_line_bytes = data::kDefaultMaxLineBytes;    // a longer JSONL line / CSV record is an error
  int decoded_cache_mb = 512;
  bool jpeg_dct_scaling = true;
  // Runtime.
  std::string device = "cpu";
  bool bf16 = false;
  bool fp16 = false;  // CUDA only: fp16 autocast + dynamic loss scaling (train/loss_scale.h)
  int torch_threads = 0;  // 0: on CPU the cores the loader workers leave free (at least 1)
  uint64_t max_model_bytes = 0;  // 0: the machine's free memory (model/memory_budget.h)
  // Logging, eval, checkpoints.
  int64_t logging_steps = 10, eval_steps = 0, save_steps = 0, save_total_limit = 0;  // eval/save_steps < 0: each epoch
  int64_t max_train_samples = 0, max_eval_samples = 0;  // > 0: only the first N rows of the split (HF's select)
  std::string tensorboard_dir;  // non-empty: the run log's records also become TensorBoard scalars there
  bool eval_at_end = true;
  // Model selection (train/model_selection.h, HF's names): "" = none; greater_is_better -1 = by the metric's name.
  std::string metric_for_best_model;
  int greater_is_better = -1;
  bool load_best_model_at_end = false;
  int64_t early_stopping_patience = 0;  // evaluations without improvement before stopping (0: never stop early)
  double early_stopping_threshold = 0;  // the improvement that counts
  std::string resume_from_checkpoint;  // "", "latest" or a checkpoint dir
  int64_t throughput_warmup_steps = 3;
  bool save_final_model = true;
  double dropout = -1;  // >= 0: overrides the model's hidden/attention dropout (0: deterministic steps)
  // Distributed (filled from the torchrun environment by the CLI; see dist/env.h). Only rank 0 writes.
  int rank = 0, world_size = 1;
  double ddp_timeout = 1800;       // seconds for the rendezvous and every collective
  bool gather_embeddings = false;  // contrastive negatives span the global batch (OpenCLIP's gather-with-grad)
};

// What bench and the tests change about a run beyond the user's options (not flags of `train`, except the
// hidden --stop_after_step that the kill/resume tests use).
struct TrainHooks {
  int in_memory_batches = 0;      // > 0: load this many batches once and cycle them (bench's upper bound)
  bool quiet = false;             // no console output (bench)
  bool write_plot = true;         // training_plot.png
  int64_t stop_after_step = -1;   // stop right after step N (after its checkpoint) as if killed: no final outputs
  bool loss_scaling = false;       // the fp16 loss scaler on any device (fp32 compute): its logic, testable on CPU
  int64_t inject_nonfinite_at_step = -1;  // step N's gradients get a NaN (the scaler must skip the step)
};

struct TrainSummary {
  double train_samples_per_second = 0, train_runtime = 0, train_loss = 0, final_loss = 0;
  double data_wait_percent = 0, first_loss = 0;
  int64_t train_samples = 0, global_step = 0;
  double eval_loss = -1;  // < 0: no eval ran
  std::string output_dir;
  int64_t max_steps = 0, steps_per_epoch = 0;
  bool completed = false;  // false: stopped early (stop_after_step), no final outputs written
  // Model selection: the best evaluation's value ("null" when none), its checkpoint folder ("" when none was
  // saved), and why early stopping ended the run ("" when it did not).
  nlohmann::json best_metric;
  std::string best_model_checkpoint, early_stop_reason;
  std::string op_paths;    // which fast paths ran: "adamw fused, quick_gelu cuda_kernel" (bench rows record it)
  // bridgetune's keys of train_results.json (throughput, losses, the last evaluation, model selection, the demo's
  // before/after scores); the recipe adds HF's and writes the file.
  nlohmann::json results;
};

TrainSummary run_train(const TrainOptions& options, const TrainHooks& hooks = {});

}  // namespace bt::train
