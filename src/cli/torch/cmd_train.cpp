// `bridgetune train`: contrastive fine-tuning with the Hugging Face example's flags (see train/trainer.h).
// Without --train_file it runs the embedded demo: generated cartoons, the tiny preset, a BPE vocabulary built
// from the captions, a short real training run.
#include <csignal>
#include <cstdlib>

#include "cli/command.h"
#include "cli/hub_flags.h"
#include "common/error.h"
#include "data/captions_dataset.h"
#include "dist/env.h"
#include "train/trainer.h"

namespace bt::cli {
namespace {

void setup(CLI::App& app) {
  auto o = std::make_shared<train::TrainOptions>();
  auto resume_opt = app.add_option("--resume_from_checkpoint", o->resume_from_checkpoint,
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
  app.add_option("--image_column", o->image_column)->capture_default_str();
  auto cc = app.add_option("--caption_column", o->caption_column, "Caption column (parquet default: image_description, as the HF New Yorker set)")->capture_default_str();
  app.add_option("--output_dir", o->output_dir)->capture_default_str();
  app.add_flag("--overwrite_output_dir", o->overwrite_output_dir, "Replace a finished or interrupted run in --output_dir");
  auto bs = app.add_option("--per_device_train_batch_size", o->per_device_train_batch_size)->capture_default_str();
  app.add_option("--per_device_eval_batch_size", o->per_device_eval_batch_size)->capture_default_str();
  auto lr = app.add_option("--learning_rate", o->learning_rate)->capture_default_str();
  app.add_option("--weight_decay", o->weight_decay)->capture_default_str();
  app.add_option("--adam_beta1", o->adam_beta1)->capture_default_str();
  app.add_option("--adam_beta2", o->adam_beta2)->capture_default_str();
  app.add_option("--adam_epsilon", o->adam_epsilon)->capture_default_str();
  app.add_option("--warmup_steps", o->warmup_steps)->capture_default_str();
  auto wr = app.add_option("--warmup_ratio", o->warmup_ratio)->capture_default_str();
  app.add_option("--lr_scheduler_type", o->lr_scheduler_type, "linear|cosine|constant|constant_with_warmup")->capture_default_str();
  auto ep = app.add_option("--num_train_epochs", o->num_train_epochs)->capture_default_str();
  auto ms = app.add_option("--max_steps", o->max_steps, "Optimizer steps (overrides --num_train_epochs when > 0)")->capture_default_str();
  app.add_option("--gradient_accumulation_steps", o->gradient_accumulation_steps)->capture_default_str();
  app.add_option("--max_grad_norm", o->max_grad_norm, "Clip the total gradient norm (<= 0: off)")->capture_default_str();
  app.add_option("--seed", o->seed)->capture_default_str();
  app.add_flag("--freeze_vision_model", o->freeze_vision_model);
  app.add_flag("--freeze_text_model", o->freeze_text_model);
  app.add_option("--freeze_text_pooler", o->freeze_text_pooler, "true|false")->capture_default_str();
  app.add_option("--max_seq_length", o->max_seq_length)->capture_default_str();
  app.add_option("--dataloader_num_workers", o->dataloader_num_workers, "Loader threads (0: load in the step loop)")->capture_default_str();
  app.add_option("--prefetch_batches", o->prefetch_batches)->capture_default_str();
  app.add_option("--image_size", o->image_size, "0: the model's vision image_size")->capture_default_str();
  app.add_option("--dedupe_images_in_batch", o->dedupe_images_in_batch, "true|false: keep repeated images out of one batch")->capture_default_str();
  app.add_flag("--use_media_pipeline", o->use_media_pipeline, "Decode/resize on the GPU (CUDA builds)");
  app.add_option("--train_transform", o->train_transform, "eval (resize + center crop, as the reference) | train (random crop + flip)")->capture_default_str();
  app.add_option("--on_bad_sample", o->on_bad_sample, "error|skip")->capture_default_str();
  app.add_option("--max_image_bytes", o->max_image_bytes, "Refuse larger image files and tar members before reading them")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--decoded_cache_mb", o->decoded_cache_mb, "Cache of transformed crops of repeated images (0: off)")->capture_default_str();
  app.add_option("--jpeg_dct_scaling", o->jpeg_dct_scaling, "true|false")->capture_default_str();
  app.add_option("--device", o->device, "cpu|cuda")->capture_default_str();
  app.add_option("--ddp_timeout", o->ddp_timeout, "Multi-process: seconds a rank waits for the others (rendezvous, each collective)")->capture_default_str();
  app.add_flag("--gather_embeddings", o->gather_embeddings, "Multi-process: contrastive negatives over the global batch (all-gather with gradient)");
  auto dr = app.add_option("--dropout", o->dropout, "Override the model's hidden/attention dropout (< 0: the config's)")->capture_default_str();
  app.add_flag("--bf16", o->bf16, "bf16 autocast (CUDA; CPU where libtorch supports it)");
  app.add_option("--torch_threads", o->torch_threads, "Intra-op threads (0: cores left by the loader workers, at least 1)")->capture_default_str();
  auto ls = app.add_option("--logging_steps", o->logging_steps)->capture_default_str();
  auto es = app.add_option("--eval_steps", o->eval_steps, "0: eval only at the end")->capture_default_str();
  auto ss = app.add_option("--save_steps", o->save_steps, "Checkpoint every N steps (0: none)")->capture_default_str();
  app.add_option("--save_total_limit", o->save_total_limit, "Keep the newest N checkpoints (0: all)")->capture_default_str();
  app.add_option("--throughput_warmup_steps", o->throughput_warmup_steps, "Steps left out of train_samples_per_second")->capture_default_str();
  auto hooks = std::make_shared<train::TrainHooks>();
  app.add_option("--stop_after_step", hooks->stop_after_step, "Testing: stop after step N as if interrupted")->group("");
  app.callback([o, hooks, resume_opt, cc, bs, lr, wr, ep, ms, ls, es, ss, dr] {
    train::TrainOptions opts = *o;
    if (resume_opt->count() > 0 && opts.resume_from_checkpoint.empty()) opts.resume_from_checkpoint = "latest";
    const dist::DistEnv env = dist::read_env();  // torchrun's RANK / WORLD_SIZE / MASTER_*
    opts.rank = env.rank;
    opts.world_size = env.world_size;
    // A peer that dies closes its sockets: without this, Gloo's next write kills us with SIGPIPE (exit 141, no
    // message) instead of failing the collective with a bt::Error that names the rank and the operation.
    if (env.distributed()) std::signal(SIGPIPE, SIG_IGN);
    if (cc->count() == 0 && !opts.train_file.empty() && data::classify_source(opts.train_file) == data::SourceKind::kParquet)
      opts.caption_column = "image_description";
    if (opts.train_file.empty() && opts.train_shards.empty()) {
      if (!opts.validation_file.empty()) fail("--validation_file needs --train_file (the demo makes its own split)");
      // The embedded demo's recipe, unless set explicitly: a tiny model from scratch wants a large learning rate
      // and no dropout; 3 epochs of 6000 rows (~560 steps, about a minute and a half on 2 cores) take held-out
      // matching from chance (0.2) to ~0.8 and retrieval R@1 from chance (1/32) to ~0.5 (docs/PERFORMANCE.md).
      if (bs->count() == 0) opts.per_device_train_batch_size = 32;
      if (lr->count() == 0) opts.learning_rate = 1e-3;
      if (wr->count() == 0) opts.warmup_ratio = 0.05;
      if (dr->count() == 0) opts.dropout = 0;
      if (ep->count() == 0 && ms->count() == 0) opts.num_train_epochs = 3;
      if (ls->count() == 0) opts.logging_steps = 20;
      if (es->count() == 0) opts.eval_steps = 187;
      if (ss->count() == 0) opts.save_steps = 187;
    }
    train::run_train(opts, *hooks);
  });
}

const Registrar reg("train", "Fine-tune BridgeTower contrastively on image-caption pairs (no data flags: built-in demo)",
                    30, setup);

}  // namespace
}  // namespace bt::cli
