// The setup of a training run (see train_setup.h): checks, output_dir, data, model, optimizer, loaders.
#include "train/torch/train_setup.h"

#include <cstdio>

#include "common/cpu_isa.h"
#include "common/device_name.h"
#include "common/error.h"
#include "common/paths.h"
#include "common/terminal.h"
#include "data/stream_window.h"
#include "dist/env.h"
#include "hub/hub.h"
#include "model/attention_select.h"
#include "model/device.h"
#include "model/preprocessor.h"
#include "report/run_log.h"
#include "source/mixed_source.h"
#include "source/source.h"
#include "text/train_bpe.h"
#include "train/checkpoint_dir.h"
#include "train/demo.h"
#include "feed/torch/gpu_media.h"
#include "train/torch/param_setup.h"
#include "train/torch/stream_train.h"

namespace bt::train {

namespace fs = std::filesystem;

namespace {

// The smallest byte-level BPE (text/train_bpe.h): 4 specials, 256 bytes, <mask>.
constexpr int kMinBpeVocabSize = 261;
constexpr size_t kStreamedTokenizerSamples = 10000;  // streamed data: the tokenizer learns from the stream's first ones

// Files a finished or interrupted run leaves in output_dir (removed by --overwrite_output_dir; nothing else is).
const char* const kRunFiles[] = {"train_results.json", "metrics.jsonl",        "training_plot.png",
                                 "config.json",        "model.safetensors",    "vocab.json",
                                 "merges.txt",         "tokenizer_config.json", "special_tokens_map.json",
                                 "eval_results.json",  "all_results.json",     "test_results.json",
                                 "trainer_state.json", "training_args.json"};  // the last four: the recipe's

// The values no run can use, before anything else (the enums were checked where the command line was read).
void check_options(const TrainOptions& o, const RunSettings& s) {
  auto positive = [](int64_t v, const char* flag) {
    if (v < 1) fail(flag, " must be >= 1 (got ", v, ")");
  };
  positive(s.train_batch, "--per_device_train_batch_size");
  positive(o.per_device_eval_batch_size, "--per_device_eval_batch_size");
  positive(o.gradient_accumulation_steps, "--gradient_accumulation_steps");
  positive(s.logging_steps, "--logging_steps");
  if (s.train_batch < 2) fail("--per_device_train_batch_size must be >= 2: the contrastive loss needs negatives");
  if (o.max_steps <= 0 && !(o.num_train_epochs > 0))
    fail("--num_train_epochs must be > 0 (got ", o.num_train_epochs, "), or give --max_steps");
  if (!(s.learning_rate >= 0)) fail("--learning_rate must be >= 0");
  if (s.warmup_ratio < 0 || s.warmup_ratio > 1) fail("--warmup_ratio must be in [0, 1] (got ", s.warmup_ratio, ")");
  if (o.warmup_steps < 0) fail("--warmup_steps must be >= 0");
  if (o.max_seq_length && *o.max_seq_length < 3) fail("--max_seq_length must be >= 3 (got ", *o.max_seq_length, ")");
  if (o.tokenizer_vocab_size < kMinBpeVocabSize)
    fail("--tokenizer_vocab_size must be >= ", kMinBpeVocabSize, " (4 special tokens, 256 bytes, <mask>; got ",
         o.tokenizer_vocab_size, ")");
  if (o.dataloader_num_workers < 0) fail("--dataloader_num_workers must be >= 0");
  if (o.media_decode == loader::MediaDecode::kGpu && !s.use_media_pipeline)
    fail("--media_decode gpu needs --use_media_pipeline (the CPU loader decodes every image itself)");
  if (o.output_dir.empty()) fail("--output_dir must not be empty");
  if (o.merge_lora && o.lora_rank <= 0) fail("--merge_lora needs --lora_rank: there are no adapters to merge");
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size)
    fail("RANK=", o.rank, " WORLD_SIZE=", o.world_size, ": need 0 <= RANK < WORLD_SIZE");
  if (!(o.ddp_timeout > 0)) fail("--ddp_timeout must be > 0 seconds (got ", o.ddp_timeout, ")");
  if (s.dropout > 1) fail("--dropout must be in [0, 1] (got ", s.dropout, ")");
  if (!o.train_file.empty() && !o.train_shards.empty()) fail("give --train_file or --train_shards, not both");
}

// --use_media_pipeline needs a CUDA device, a CUDA build and real loader batches; whether its JPEGs are decoded on
// the device (--media_decode) is GpuMediaPipeline's decision, taken here once.
bool device_jpegs(const TrainOptions& o, const RunSettings& s, const TrainHooks& hooks, const torch::Device& device) {
  if (!s.use_media_pipeline) return false;
  if (!device.is_cuda())
    fail("--use_media_pipeline needs --device cuda (the GPU media pipeline decodes and resizes on the device)");
  std::string why;
  if (!feed::GpuMediaPipeline::available(&why)) fail("--use_media_pipeline needs a CUDA build of bridgetune and a GPU (", why, ")");
  if (hooks.in_memory_batches > 0) fail("--use_media_pipeline cannot be combined with in-memory batches");
  return feed::GpuMediaPipeline::decode_jpegs_on_device(o.media_decode);
}

// The launch environment: torchrun's variables when the CLI saw a multi-process launch, else one process.
dist::DistEnv dist_env(const TrainOptions& o) {
  if (o.world_size <= 1) return {};
  dist::DistEnv env = dist::read_env();
  if (env.world_size != o.world_size || env.rank != o.rank)
    fail("RANK/WORLD_SIZE in the environment (", env.rank, "/", env.world_size, ") differ from the options (", o.rank,
         "/", o.world_size, ")");
  return env;
}

// Refuses an output_dir holding another run unless told to replace it; all before anything is written.
void check_output_dir(const TrainOptions& o) {
  const fs::path out(o.output_dir);
  if (std::string why = output_folder_problem(out); !why.empty()) fail("--output_dir ", o.output_dir, ": ", why);
  std::error_code ec;
  if (!fs::is_directory(out, ec)) return;  // made by prepare_output_dir()
  // latest_or_none resumes what it finds, and is otherwise a fresh run: a finished run is not started again.
  const bool resuming = !o.resume_from_checkpoint.empty() && o.resume_from_checkpoint != "latest_or_none";
  if (o.overwrite_output_dir || resuming) return;
  if (fs::exists(out / "train_results.json"))
    fail("--output_dir ", o.output_dir, " holds a finished run (train_results.json); pass --overwrite_output_dir to "
         "replace it, or choose another --output_dir");
  if (o.resume_from_checkpoint.empty() && !list_checkpoints(out).empty())
    fail("--output_dir ", o.output_dir, " holds checkpoints of an earlier run; pass --resume_from_checkpoint latest to "
         "continue it or --overwrite_output_dir to start over");
}

// --tokenizer_name and --model_name_or_path name folders that exist.
void check_model_paths(const TrainRun& r) {
  if (!r.tokenizer_dir.empty() && !fs::is_directory(r.tokenizer_dir))
    fail("--tokenizer_name ", r.tokenizer_dir, ": no such folder (give one with vocab.json + merges.txt or "
         "tokenizer.json)");
  if (!r.model_dir.empty()) {
    if (!fs::is_directory(r.model_dir))
      fail("--model_name_or_path ", r.model_dir, ": no such folder (give an HF checkpoint folder with "
           "config.json and model.safetensors, or use --model_preset)");
    if (!fs::exists(fs::path(r.model_dir) / "config.json"))
      fail("--model_name_or_path ", r.model_dir, ": no config.json in it");
  }
}

void clear_previous_run(const fs::path& out) {
  std::error_code ec;
  for (const char* f : kRunFiles) fs::remove(out / f, ec);
  for (const auto& c : list_checkpoints(out)) fs::remove_all(c.path, ec);
  remove_stale_staging(out);
}

// A split through the one source factory; the training set gets its epoch order (parquet's row-group windows,
// into r.train_locality), the validation set is read as opened.
std::shared_ptr<const data::Dataset> open_data(TrainRun& r, bool train) {
  const std::string& path = train ? r.s.train_path : r.s.validation_path;
  const std::string flag = train ? r.s.train_flag : "--validation_file";
  const int64_t max_rows = train ? r.o.max_train_samples : r.o.max_eval_samples;
  const source::SourceOptions so = train_source_options(r.o, r.s, flag, max_rows, /*locality_order=*/train);
  if (train)  // streamed --train_shards: a bounded window over the stream (stream_train.h)
    if (auto streamed = open_streamed_train(r, so)) return streamed;
  source::Source src = train && !r.o.train_mix_files.empty()  // several --train_file: mixed (source/mixed_source.h)
      ? source::open_mixed(r.o.train_mix_files, {r.o.train_mix_weights, r.o.train_mix_stopping, r.o.seed}, so)
      : source::open_source(path, so);
  if (train) src.apply_order(r.train_locality);
  if (src.mix && r.talk) std::printf("%s\n", printable(src.mix->summary()).c_str());
  return src.dataset;
}

// Model config and tokenizer: the checkpoint's being resumed, a pretrained folder's, or a preset's.
void load_config_and_tokenizer(TrainRun& r) {
  const TrainOptions& o = r.o;
  if (!r.resume_dir.empty()) {
    r.cfg = model::load_pretrained_config(r.resume_dir.string());
    r.tok = text::Tokenizer::from_dir(r.resume_dir.string());
  } else if (!r.model_dir.empty()) {
    r.cfg = model::load_pretrained_config(r.model_dir);  // + preprocessor_config.json's mean/std
    r.tok = eval::model_tokenizer(r.model_dir, r.tokenizer_dir, r.cfg.text);  // --tokenizer_name: instead of its own
  } else {
    r.cfg = model::preset(o.model_preset);
    if (o.image_size > 0) r.cfg.vision.image_size = o.image_size;
    if (!r.tokenizer_dir.empty()) {
      r.tok = text::Tokenizer::from_dir(r.tokenizer_dir);
      r.cfg.text.vocab_size = static_cast<int>(r.tok->vocab_size());
    }
  }
  if (r.tok)  // an id past the table: libtorch's "index out of range", a CUDA assert
    model::check_vocab_fits(r.tok->vocab_size(), r.cfg.text,
                            !r.resume_dir.empty() ? "--resume_from_checkpoint " + r.resume_dir.string()
                            : !r.tokenizer_dir.empty() ? "--tokenizer_name " + r.tokenizer_dir
                                                       : "--model_name_or_path " + r.model_dir);
  model::resolve_max_seq_length(o.max_seq_length, r.cfg.text);  // a length past the positions: refused now
  if (r.s.dropout >= 0) r.cfg.text.hidden_dropout_prob = r.cfg.text.attention_probs_dropout_prob = r.s.dropout;
  if (o.image_size > 0 && o.image_size != r.image_size())
    fail("--image_size ", o.image_size, " differs from the model's vision image_size ", r.image_size(),
         " (its position embeddings are sized for it)");
}

// Before anything is written or allocated: the model's memory for training (model/memory_budget.h), and the
// checkpoint it starts from must fill it (a config.json describing a larger model than its weights is refused
// here, not after the model took its memory).
void check_model_fits(const TrainRun& r) {
  const TrainOptions& o = r.o;
  model::check_model_memory(r.cfg, model::ModelBudget{true, r.batch(), o.max_model_bytes});
  if (!r.resume_dir.empty())
    model::check_checkpoint_fits(r.cfg, r.resume_dir.string(), false);
  else if (!r.model_dir.empty())  // the folder (a hub id resolved), not the flag as given
    model::check_checkpoint_fits(r.cfg, r.model_dir, true);
}

// From here on output_dir is written (by rank 0; the others wait for it at the barriers): the demo's data, and
// the demo tokenizer built from the training captions.
void prepare_output_dir(TrainRun& r) {
  r.group->barrier();
  if (r.main_rank) make_output_folder(r.out, "--output_dir");
  if (r.main_rank && !r.lock) r.lock = OutputDirLock::acquire(r.out);  // a folder this run created
  if (r.main_rank && r.o.overwrite_output_dir && r.resume_dir.empty()) clear_previous_run(r.out);
  if (r.main_rank) remove_stale_staging(r.out);
  if (r.s.demo) {
    if (r.main_rank) demo::write_data(r.out, !r.talk);
    r.group->barrier();
    r.train_ds = open_data(r, true);
    r.val_ds = open_data(r, false);
    r.plan = plan_steps(loader::epoch_rows(r.train_ds->size(), r.train_locality), r.o, r.s);
  }
  if (!r.tok) {
    std::vector<std::string> captions;
    if (const auto* streamed = streamed_train(r)) captions = streamed->first_captions(kStreamedTokenizerSamples);
    else
      for (size_t i = 0; i < r.train_ds->size(); ++i) captions.push_back(r.train_ds->caption(i));
    r.tok = text::train_tokenizer(captions, static_cast<size_t>(r.o.tokenizer_vocab_size));
    r.cfg.text.vocab_size = static_cast<int>(r.tok->vocab_size());
    if (r.talk) std::printf("built a %zu-token BPE vocabulary from the training captions\n", r.tok->vocab_size());
  }
}

void build_model(TrainRun& r) {
  const TrainOptions& o = r.o;
  // On a GPU the parameters are made and randomly initialised there (the large preset's 866M values take seconds
  // on one CPU thread); the CPU path is unchanged, so CPU runs keep their exact initial weights.
  r.model = model::BridgeTowerForContrastiveLearning(
      r.cfg, r.device.is_cuda() ? torch::TensorOptions().device(r.device) : torch::TensorOptions());
  if (r.resume_dir.empty() && !r.model_dir.empty()) r.model->load_weights(r.model_dir, true);
  if (r.resume_dir.empty()) init_logit_scale(r.model, o);  // a resumed run keeps its checkpoint's
  const std::string base = o.model_name_or_path.empty() ? fs::absolute(r.out).string() : o.model_name_or_path;
  const int adapted = apply_lora(r.model, o, base);
  apply_freezing(r.model, o);  // before the count: the frozen pooler and logit scale are not among what trains
  if (adapted > 0 && r.talk)
    std::printf("LoRA: rank %d adapters on %d Linear layers; %lld of %lld parameters train\n", o.lora_rank, adapted,
                static_cast<long long>(r.model->count_parameters(true)),
                static_cast<long long>(r.model->count_parameters()));
  r.model->to(r.device);
  r.model->train();
  r.model->bridgetower->gradient_checkpointing = o.gradient_checkpointing;
  AdamWOptions adamw{r.s.learning_rate, o.adam_beta1, o.adam_beta2, o.adam_epsilon, o.weight_decay};
  adamw.paths = r.kernel_paths;  // this run's op paths (TrainSummary::op_paths)
  r.opt.emplace(make_adamw(*r.model, adamw, lr_scales(o, r.s, r.cfg)));
}

// The loaders. Several ranks with dedupe: dedupe the global batch once (the same order on every rank), then shard it.
void build_loaders(TrainRun& r) {
  const TrainOptions& o = r.o;
  const int B = r.batch();
  loader::LoaderOptions train_lo = loader_options(o, r.s, r.cfg, B, true, r.device_jpegs);
  train_lo.sampler.row_group_ends = r.train_locality.row_group_ends;
  train_lo.sampler.shuffle_window_groups = r.train_locality.shuffle_window_groups;
  train_lo.sampler.mix = r.train_locality.mix;
  adapt_streamed_loader(r, train_lo);  // streamed --train_shards: the stream's order, no dedupe or cache
  if (o.world_size > 1 && train_lo.sampler.dedupe_images_in_batch) {
    loader::SamplerOptions g = train_lo.sampler;
    g.batch_size = static_cast<size_t>(B) * static_cast<size_t>(train_lo.dedupe_batches) * static_cast<size_t>(o.world_size);
    r.global_view = std::make_shared<loader::GlobalOrderView>(r.train_ds, g);
    train_lo.sampler.shuffle = false;  // the view is already in (locality-)shuffled, deduplicated global order
    train_lo.sampler.dedupe_images_in_batch = false;
    train_lo.sampler.row_group_ends.clear();
    train_lo.sampler.mix = nullptr;  // the view is the mixed epoch already
  }
  r.train_loader = std::make_unique<loader::Loader>(
      r.global_view ? std::shared_ptr<const data::Dataset>(r.global_view) : r.train_ds, train_lo);
  if (r.val_ds)
    r.val_loader = std::make_unique<loader::Loader>(r.val_ds, loader_options(o, r.s, r.cfg, o.per_device_eval_batch_size, false));
  if (r.val_ds && !r.val_matching_path.empty() && r.main_rank)  // only rank 0 evaluates
    r.val_matching = eval::open_matching(r.val_matching_path, eval::matching_source_options(r.s.read, r.o.max_eval_samples));
}

// Model selection's options, resolved before output_dir is written (the demo's validation folder, not yet
// generated, always holds matching.jsonl).
void resolve_model_selection(TrainRun& r) {
  const TrainOptions& o = r.o;
  const bool has_val = !r.s.validation_path.empty();
  if (r.s.demo) r.val_matching_path = r.s.validation_path;
  else if (has_val)
    r.val_matching_path =
        eval::matching_data_of(r.s.validation_path, eval::matching_source_options(r.s.read, o.max_eval_samples));
  SelectionOptions so{o.metric_for_best_model, o.greater_is_better, o.load_best_model_at_end,
                      o.early_stopping_patience, o.early_stopping_threshold};
  r.selection = resolve_selection(so, r.s.eval.as_flag(), r.s.save.as_flag(),
                                  has_val ? eval::eval_metric_keys(!r.val_matching_path.empty()) : std::vector<std::string>{});
  if (r.selection.active() && r.talk)
    std::printf("model selection: %s (%s is better)%s%s\n", r.selection.metric.c_str(),
                r.selection.greater_is_better ? "greater" : "lower",
                r.selection.load_best_at_end ? "; the best checkpoint becomes the final model" : "",
                r.selection.patience > 0 ? str("; early stopping after ", r.selection.patience,
                                               " evaluations without improvement").c_str() : "");
}

// One line for an fp32 run on a CPU with bf16 in hardware, where bf16 matmuls run several times faster (small
// preset, batch 8: 3.5-4x here, issue 30). Not for models below kGemmBoundParameters, whose steps are dominated by
// per-op overhead that autocast's casts add to (the tiny demo runs slower in bf16).
// Not model::kComputeBoundParameters (20 M, model/api.h), which answers another question -- whether the model
// outweighs the loader workers' decoding (then it takes every core) -- where this one asks whether the GEMMs
// outweigh the per-op overhead within the step. The small preset with a demo-sized vocabulary (11.6 M parameters)
// is GEMM-bound (bf16 pays) yet not compute-bound against its loader; the tiny preset (3.8 M) is neither.
// A bf16 run where bf16 is emulated says so and what it costs, instead.
constexpr int64_t kGemmBoundParameters = 5'000'000;
void suggest_bf16(const TrainRun& r) {
  if (!r.talk || !r.device.is_cpu()) return;
  if (r.s.bf16) {
    if (const std::string note = model::cpu_bf16_note(); !note.empty()) std::printf("%s\n", note.c_str());
    return;
  }
  const CpuIsa& cpu = cpu_isa();
  if (!cpu.bf16_native) return;
  if (model::parameter_numel(*r.model) < kGemmBoundParameters) return;
  std::printf("this CPU computes bf16 natively (%s): --bf16 usually trains a model of this size several times "
              "faster than fp32 here (`bridgetune bench` measures both)\n", cpu.bf16_feature.c_str());
}

// A preset trained from scratch at a fine-tuning rate (the default 5e-5 left the tiny preset at chance after 200
// steps): one line with what learns, the demo's recipe.
void suggest_recipe(const TrainRun& r) {
  if (!r.talk || r.s.demo || !r.model_dir.empty() || !r.resume_dir.empty() || r.s.learning_rate >= 1e-4) return;
  std::printf("note: --model_preset %s trains from scratch here, at --learning_rate %g, a fine-tuning rate: it may "
              "stay near chance; from scratch the demo's recipe learns (--learning_rate %g --warmup_ratio %g "
              "--dropout %g; README, \"Training on your data\")\n",
              r.o.model_preset.c_str(), r.s.learning_rate, demo::kLearningRate, demo::kWarmupRatio, demo::kDropout);
}

// The trainer state (the saved one when resuming), and every rank starting from rank 0's weights.
void restore_state(TrainRun& r) {
  const TrainOptions& o = r.o;
  r.st.settings = {{"per_device_train_batch_size", r.batch()},
                   {"gradient_accumulation_steps", o.gradient_accumulation_steps},
                   {"contrastive_accumulation", accumulation_setting(o)},
                   {"world_size", o.world_size},
                   {"seed", o.seed},
                   {"total_steps", r.plan.total_steps},
                   {"steps_per_epoch", r.plan.steps_per_epoch}, {"logging_steps", r.s.logging_steps},
                   {"eval_steps", r.plan.eval_steps}, {"save_steps", r.plan.save_steps},
                   {"num_train_epochs", o.num_train_epochs}};  // the last five: HF's state
  r.st.settings.update(run_identity(r));
  if (r.s.fp16 || r.hooks.loss_scaling) r.loss_scale.emplace();
  if (!r.resume_dir.empty()) {
    r.st = load_checkpoint(r.resume_dir, r.model, *r.opt);
    r.st.settings.update(run_identity(r));  // what this run trains on (--resume_with_changed_data: the new data)
    if (r.loss_scale) r.loss_scale->restore(r.st.loss_scale);
    if (r.talk)
      std::printf("resumed from %s at step %lld\n", printable(r.resume_dir.string()).c_str(),
                  (long long)r.st.global_step);
  }
  r.params = r.opt->tensors();
  r.sync = std::make_unique<dist::GradientSync>(*r.group, r.params);
  r.sync->broadcast_parameters();
  if (r.group->distributed() && r.talk)
    std::printf("%s\n", str("data parallel: ", r.group->world_size(), " processes (", r.group->backend(), "), ",
                            o.gather_embeddings ? "contrastive negatives over the global batch" : "per-rank contrastive loss")
                            .c_str());
}

}  // namespace

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

eval::EmbedOptions embed_options(const TrainOptions& o, const RunSettings& s, const model::BridgeTowerConfig& cfg,
                                 const torch::Device& device) {
  eval::EmbedOptions eo;
  eo.batch_size = o.per_device_eval_batch_size;
  eo.num_workers = o.dataloader_num_workers;
  eo.image_size = cfg.vision.image_size;
  eo.max_seq_length = model::resolve_max_seq_length(o.max_seq_length, cfg.text);
  eo.max_image_pixels = o.max_image_pixels;
  eo.on_bad_sample = s.read.on_bad;
  eo.device = device;
  eo.bf16 = s.bf16;
  return eo;
}

source::SourceOptions train_source_options(const TrainOptions& o, const RunSettings& s, const std::string& flag,
                                           int64_t max_rows, bool locality_order) {
  source::SourceOptions so = source::source_options(s.read, flag, max_rows, locality_order);
  so.shuffle_window_row_groups = o.shuffle_window_row_groups;
  return so;
}

loader::LoaderOptions loader_options(const TrainOptions& o, const RunSettings& s, const model::BridgeTowerConfig& cfg,
                                     int batch, bool train, bool device_jpegs) {
  loader::LoaderOptions lo;
  lo.num_workers = o.dataloader_num_workers;
  lo.worker_priority = {o.loader_worker_nice >= 0 ? o.loader_worker_nice : loader::default_worker_nice(names_cuda(o.device)),
                        o.loader_worker_affinity};
  lo.prefetch_batches = std::max(o.prefetch_batches, 1);
  lo.batch_size = batch;
  lo.transform.image_size = cfg.vision.image_size;
  cfg.image.apply_to(lo.transform);  // the model folder's mean/std (preprocessor_config.json), else CLIP's
  lo.transform.dct_scaling = o.jpeg_dct_scaling;
  lo.transform.max_image_pixels = o.max_image_pixels;
  if (train) media::apply_augment(o.train_transform, lo.transform);  // else the spec's default: eval
  lo.on_bad_sample = s.read.on_bad;
  lo.decoded_cache_mb = static_cast<size_t>(std::max(o.decoded_cache_mb, 0));
  lo.sampler.seed = o.seed;
  lo.sampler.shuffle = train;
  lo.sampler.rank = train ? o.rank : 0;
  lo.sampler.world_size = train ? o.world_size : 1;
  lo.sampler.dedupe_images_in_batch = train && o.dedupe_images_in_batch;
  // The rows one loss sees: with exact accumulation a step's K micro-batches are one batch to the dedupe, so
  // they hold the rows (in the order) of one batch of K x B.
  const bool exact = train && o.gradient_accumulation_steps > 1 &&
                     o.contrastive_accumulation == ContrastiveAccumulation::kExact;
  lo.sampler.batch_size = static_cast<size_t>(batch);
  lo.dedupe_batches = exact ? o.gradient_accumulation_steps : 1;
  lo.output_decoded = train && s.use_media_pipeline;  // the GPU resizes (GpuMediaSource): workers only decode
  lo.ship_device_jpegs = lo.output_decoded && device_jpegs;
  if (lo.output_decoded) lo.packed_allocator = feed::GpuMediaPipeline::pinned_allocator();  // no copy before the upload
  return lo;
}

std::unique_ptr<TrainRun> setup_run(const TrainOptions& o, const RunSettings& s, const TrainHooks& hooks) {
  auto run = std::make_unique<TrainRun>(o, s, hooks);
  TrainRun& r = *run;
  // Hub ids (org/name) become snapshot folders of the local Hugging Face cache before any check (hub/hub.h).
  auto folder = [&](const std::string& id, const char* flag) {
    return id.empty() ? id : hub::resolve(id, hub::RepoType::Model, o.model_revision, o.cache_dir, flag);
  };
  r.model_dir = folder(o.model_name_or_path, "--model_name_or_path");
  r.tokenizer_dir = folder(o.tokenizer_name, "--tokenizer_name");
  check_options(o, s);
  r.device = model::parse_device(o.device);
  r.device_jpegs = device_jpegs(o, s, hooks, r.device);
  // Rendezvous first, so every rank runs the checks below before rank 0 writes anything.
  r.group = dist::init_process_group(dist_env(o), {o.ddp_timeout, r.device.is_cuda()});
  check_output_dir(o);
  r.out = o.output_dir;
  r.main_rank = r.group->is_main();
  r.talk = r.main_rank && !hooks.quiet;
  model::set_attention_override(o.attention_backend);  // this run's attention calls (model/attention_select.h)
  if (r.main_rank) r.profiler = make_step_profiler(o.profile_steps, o.output_dir, r.device.is_cuda());
  // One run per folder, before a resume looks at (and cleans) its staging: the lock, or one line naming its holder.
  std::error_code ec;
  if (r.main_rank && fs::is_directory(r.out, ec)) r.lock = OutputDirLock::acquire(r.out);
  if (!o.resume_from_checkpoint.empty()) {
    r.resume_dir = resolve_resume_dir(o.resume_from_checkpoint, r.out);  // empty: latest_or_none found none
  }
  // A resumed run reads the tokenizer it saved in its checkpoint (so the same command line can be rerun).
  check_model_paths(r);
  torch::manual_seed(o.seed);

  // Data (the embedded demo writes its generated data: only after every check).
  if (!s.demo) {
    r.train_ds = open_data(r, true);
    if (!s.validation_path.empty()) r.val_ds = open_data(r, false);
  }
  load_config_and_tokenizer(r);
  r.torch_threads = model::torch_threads_for(o.torch_threads, o.dataloader_num_workers, r.device.is_cpu(),
                                             model::parameter_count(r.cfg), r.group->env().local_world_size);
  model::configure_torch_threads(r.torch_threads);
  // Too few rows: fails before anything is written.
  if (!s.demo)
    r.plan = plan_steps(streamed_train(r) ? streamed_plan_rows(r) : loader::epoch_rows(r.train_ds->size(), r.train_locality),
                        o, s);
  check_model_fits(r);
  resolve_model_selection(r);
  prepare_output_dir(r);
  build_model(r);
  suggest_bf16(r);
  suggest_recipe(r);
  build_loaders(r);
  if (!r.resume_dir.empty()) check_resume_settings(r);  // the model and the data known, nothing written yet
  restore_state(r);
  return run;
}

}  // namespace bt::train
