// The training loop of `bridgetune train` (contract in train/trainer.h).
#include "train/trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>

#include "common/error.h"
#include "data/synth.h"
#include "dist/env.h"
#include "dist/gather.h"
#include "dist/grad_sync.h"
#include "dist/process_group.h"
#include "hub/hub.h"
#include "loader/global_order.h"
#include "loader/loader.h"
#include "model/bridgetower.h"
#include "model/preprocessor.h"
#include "source/source.h"
#include "train/torch/embed_eval.h"
#include "text/tokenizer.h"
#include "text/train_bpe.h"
#include "train/checkpoint_dir.h"
#include "train/plot.h"
#include "train/progress.h"
#include "train/run_log.h"
#include "train/schedule.h"
#include "train/throughput.h"
#include "train/torch/batch_source.h"
#include "train/torch/checkpoint.h"
#include "train/torch/cuda_ops.h"
#include "train/torch/evaluate.h"
#include "train/torch/gpu_media.h"
#include "train/torch/optim.h"

namespace bt::train {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kDemoVocabSize = 1024;

double now_s() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

// Files a finished or interrupted run leaves in output_dir (removed by --overwrite_output_dir; nothing else is).
const char* const kRunFiles[] = {"train_results.json", "metrics.jsonl",        "training_plot.png",
                                 "config.json",        "model.safetensors",    "vocab.json",
                                 "merges.txt",         "tokenizer_config.json", "special_tokens_map.json",
                                 "eval_results.json",  "all_results.json",     "test_results.json",
                                 "trainer_state.json", "training_args.json"};  // the last four: the recipe's

void check_options(const TrainOptions& o) {
  auto positive = [](int64_t v, const char* flag) {
    if (v < 1) fail(flag, " must be >= 1 (got ", v, ")");
  };
  positive(o.per_device_train_batch_size, "--per_device_train_batch_size");
  positive(o.per_device_eval_batch_size, "--per_device_eval_batch_size");
  positive(o.gradient_accumulation_steps, "--gradient_accumulation_steps");
  positive(o.logging_steps, "--logging_steps");
  if (o.per_device_train_batch_size < 2) fail("--per_device_train_batch_size must be >= 2: the contrastive loss needs negatives");
  if (o.max_steps <= 0 && !(o.num_train_epochs > 0))
    fail("--num_train_epochs must be > 0 (got ", o.num_train_epochs, "), or give --max_steps");
  if (!(o.learning_rate >= 0)) fail("--learning_rate must be >= 0");
  if (o.warmup_ratio < 0 || o.warmup_ratio > 1) fail("--warmup_ratio must be in [0, 1] (got ", o.warmup_ratio, ")");
  if (o.warmup_steps < 0) fail("--warmup_steps must be >= 0");
  if (o.max_seq_length < 3) fail("--max_seq_length must be >= 3 (got ", o.max_seq_length, ")");
  if (o.dataloader_num_workers < 0) fail("--dataloader_num_workers must be >= 0");
  if (o.train_transform != "eval" && o.train_transform != "train")
    fail("--train_transform must be eval or train (got '", o.train_transform, "')");
  if (o.on_bad_sample != "error" && o.on_bad_sample != "skip")
    fail("--on_bad_sample must be error or skip (got '", o.on_bad_sample, "')");
  parse_schedule_type(o.lr_scheduler_type);
  if (o.output_dir.empty()) fail("--output_dir must not be empty");
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size)
    fail("RANK=", o.rank, " WORLD_SIZE=", o.world_size, ": need 0 <= RANK < WORLD_SIZE");
  if (!(o.ddp_timeout > 0)) fail("--ddp_timeout must be > 0 seconds (got ", o.ddp_timeout, ")");
  if (o.dropout > 1) fail("--dropout must be in [0, 1] (got ", o.dropout, ")");
  if (!o.train_file.empty() && !o.train_shards.empty()) fail("give --train_file or --train_shards, not both");
}

torch::Device pick_device(const TrainOptions& o) {
  if (o.device == "cpu") return torch::kCPU;
  if (o.device == "cuda" || o.device.rfind("cuda:", 0) == 0) {
    if (!torch::cuda::is_available())
      fail("--device ", o.device, ": this libtorch build sees no CUDA device (use --device cpu)");
    return torch::Device(o.device);
  }
  fail("--device must be cpu or cuda (got '", o.device, "')");
}

// A resumed run must keep the data order and the global batch: refuse a checkpoint made with other settings.
void check_resume_settings(const fs::path& dir, const TrainOptions& o) {
  const fs::path state = resume_state_file(dir);
  const TrainerState saved = TrainerState::from_json(read_json_file(state), state.string());
  auto same = [&](const char* key, const char* what, const nlohmann::json& now) {
    if (!saved.settings.contains(key) || saved.settings[key] == now) return;
    fail("--resume_from_checkpoint ", dir.string(), ": it was made with ", what, " ", saved.settings[key].dump(),
         ", this run has ", now.dump(), "; resume with the same value (or start a new --output_dir)");
  };
  same("per_device_train_batch_size", "--per_device_train_batch_size", o.per_device_train_batch_size);
  same("seed", "--seed", o.seed);
  same("world_size", "world size (WORLD_SIZE / torchrun --nproc_per_node)", o.world_size);
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
  if (!fs::exists(out)) return;
  if (!fs::is_directory(out)) fail("--output_dir ", o.output_dir, " exists and is not a folder");
  if (o.overwrite_output_dir || !o.resume_from_checkpoint.empty()) return;
  if (fs::exists(out / "train_results.json"))
    fail("--output_dir ", o.output_dir, " holds a finished run (train_results.json); pass --overwrite_output_dir to "
         "replace it, or choose another --output_dir");
  if (!list_checkpoints(out).empty())
    fail("--output_dir ", o.output_dir, " holds checkpoints of an earlier run; pass --resume_from_checkpoint latest to "
         "continue it or --overwrite_output_dir to start over");
}

void clear_previous_run(const fs::path& out) {
  std::error_code ec;
  for (const char* f : kRunFiles) fs::remove(out / f, ec);
  for (const auto& c : list_checkpoints(out)) fs::remove_all(c.path, ec);
  remove_stale_staging(out);
}

// The embedded default: New-Yorker-like cartoons, small enough for a sub-minute run on two cores.
std::pair<std::string, std::string> make_demo_data(const fs::path& out, bool quiet) {
  const fs::path base = out / "demo_data";
  // Captions that describe each picture, with a coloured balloon a small model learns to see within minutes;
  // enough distinct pictures (2000) that what it learns carries over to the held-out ones.
  data::SynthOptions train;
  train.n = 6000;
  train.images = 2000;
  train.seed = 1;
  train.min_width = 160, train.max_width = 320;
  train.accents = true;
  data::SynthOptions val = train;
  val.n = 64, val.images = 32, val.seed = 2;
  if (!quiet) std::printf("generating demo data (%zu + %zu cartoon rows) in %s\n", train.n, val.n, base.c_str());
  data::write_synth((base / "train").string(), train);
  data::write_synth((base / "validation").string(), val);
  return {(base / "train").string(), (base / "validation").string()};
}

loader::LoaderOptions loader_options(const TrainOptions& o, int image_size, int batch, bool train) {
  loader::LoaderOptions lo;
  lo.num_workers = o.dataloader_num_workers;
  lo.prefetch_batches = std::max(o.prefetch_batches, 1);
  lo.batch_size = batch;
  lo.transform.image_size = image_size;
  lo.transform.dct_scaling = o.jpeg_dct_scaling;
  lo.transform.mode = train && o.train_transform == "train" ? media::TransformMode::kTrain : media::TransformMode::kEval;
  lo.on_bad_sample = o.on_bad_sample == "skip" ? loader::OnBadSample::kSkip : loader::OnBadSample::kError;
  lo.decoded_cache_mb = static_cast<size_t>(std::max(o.decoded_cache_mb, 0));
  lo.image_column = o.image_column;
  lo.caption_column = o.caption_column;
  lo.sampler.seed = o.seed;
  lo.sampler.shuffle = train;
  lo.sampler.rank = train ? o.rank : 0;
  lo.sampler.world_size = train ? o.world_size : 1;
  lo.sampler.dedupe_images_in_batch = train && o.dedupe_images_in_batch;
  lo.sampler.batch_size = static_cast<size_t>(batch);
  lo.output_decoded = train && o.use_media_pipeline;  // the GPU resizes (GpuMediaSource): workers only decode
  return lo;
}

// Captions file/folder, WebDataset tar shards (path, glob or brace pattern) or HF parquet (file, folder, glob).
// A training parquet set also gets its locality order (row groups shuffled, then rows within windows of groups),
// returned through `sampler` for the train loader's SamplerOptions.
// Train and validation sets through the one source factory; the training set gets its epoch order (parquet's
// row-group windows), the validation set is read as opened.
std::shared_ptr<const data::Dataset> open_data(const std::string& path, const TrainOptions& o, const char* flag,
                                               loader::SamplerOptions* sampler = nullptr) {
  source::SourceOptions so;
  so.image_column = o.image_column;
  so.caption_column = o.caption_column;
  so.on_bad = o.on_bad_sample == "skip" ? data::OnBad::kSkip : data::OnBad::kError;
  so.shuffle_window_row_groups = o.shuffle_window_row_groups;
  so.max_image_bytes = o.max_image_bytes;
  so.locality_order = sampler != nullptr;
  so.flag = flag;
  const int64_t max_rows = std::string(flag) == "--validation_file" ? o.max_eval_samples : o.max_train_samples;
  so.max_rows = size_t(std::max<int64_t>(0, max_rows));
  source::Source src = source::open_source(path, so);
  if (sampler) src.apply_order(*sampler);
  return src.dataset;
}

void say_early(bool talk, const std::string& line) {
  if (talk) std::printf("%s\n", line.c_str());
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

}  // namespace

TrainSummary run_train(const TrainOptions& options) {
  // Hub ids (org/name) become snapshot folders of the local Hugging Face cache before any check (hub/hub.h).
  TrainOptions o = options;
  for (auto [p, flag] : {std::pair{&o.model_name_or_path, "--model_name_or_path"}, {&o.tokenizer_name, "--tokenizer_name"}})
    if (!p->empty()) *p = hub::resolve(*p, hub::RepoType::Model, o.model_revision, o.cache_dir, flag);
  check_options(o);
  const torch::Device device = pick_device(o);
  if (o.use_media_pipeline && !device.is_cuda())
    fail("--use_media_pipeline needs --device cuda (the GPU media pipeline decodes and resizes on the device)");
  if (o.use_media_pipeline) {
    std::string why;
    if (!GpuMediaPipeline::available(&why)) fail("--use_media_pipeline needs a CUDA build of bridgetune and a GPU (", why, ")");
    if (o.in_memory_batches > 0) fail("--use_media_pipeline cannot be combined with in-memory batches");
  }
  // Rendezvous first, so every rank runs the checks below before rank 0 writes anything.
  auto group = dist::init_process_group(dist_env(o), {o.ddp_timeout, o.device});
  check_output_dir(o);
  const fs::path out(o.output_dir);
  const bool main_rank = group->is_main();
  const bool talk = main_rank && !o.quiet;
  fs::path resume_dir;
  if (!o.resume_from_checkpoint.empty()) {
    resume_dir = resolve_resume_dir(o.resume_from_checkpoint, out);
    check_resume_settings(resume_dir, o);
  }
  // A resumed run reads the tokenizer it saved in its checkpoint (so the same command line can be rerun).
  if (!o.tokenizer_name.empty() && !o.model_name_or_path.empty())
    fail("--tokenizer_name is for --model_preset models; --model_name_or_path ", o.model_name_or_path,
         " brings its own tokenizer files");
  if (!o.tokenizer_name.empty() && !fs::is_directory(o.tokenizer_name))
    fail("--tokenizer_name ", o.tokenizer_name, ": no such folder (give one with vocab.json + merges.txt or "
         "tokenizer.json)");
  if (!o.model_name_or_path.empty()) {
    if (!fs::is_directory(o.model_name_or_path))
      fail("--model_name_or_path ", o.model_name_or_path, ": no such folder (give an HF checkpoint folder with "
           "config.json and model.safetensors, or use --model_preset)");
    if (!fs::exists(fs::path(o.model_name_or_path) / "config.json"))
      fail("--model_name_or_path ", o.model_name_or_path, ": no config.json in it");
  }
  // Default intra-op threads on CPU: the cores the loader workers leave free. Oversubscribing (torch's OpenMP
  // pool spinning against the workers) made tiny-model steps ~9x slower on 2 cores.
  int torch_threads = o.torch_threads;
  if (torch_threads <= 0 && device.is_cpu())
    torch_threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) - o.dataloader_num_workers);
  model::configure_torch_threads(torch_threads);
  torch::manual_seed(o.seed);

  // Data (the embedded demo writes its generated data: only after every check above).
  const char* train_flag = o.train_shards.empty() ? "--train_file" : "--train_shards";
  std::string train_path = o.train_shards.empty() ? o.train_file : o.train_shards, val_path = o.validation_file;
  const bool demo = train_path.empty();
  std::shared_ptr<const data::Dataset> train_ds, val_ds;
  loader::SamplerOptions train_locality;  // parquet's row-group windows (empty otherwise)
  if (!demo) {
    train_ds = open_data(train_path, o, train_flag, &train_locality);
    if (!val_path.empty()) val_ds = open_data(val_path, o, "--validation_file");
  }

  // Model config and tokenizer.
  model::BridgeTowerConfig cfg;
  std::optional<text::Tokenizer> tok;
  if (!resume_dir.empty()) {
    cfg = model::load_config((resume_dir / "config.json").string());
    tok = text::Tokenizer::from_dir(resume_dir.string());
  } else if (!o.model_name_or_path.empty()) {
    cfg = model::load_config((fs::path(o.model_name_or_path) / "config.json").string());
    tok = text::Tokenizer::from_dir(o.model_name_or_path);
    if (auto pp = fs::path(o.model_name_or_path) / "preprocessor_config.json"; fs::exists(pp))  // HF's image transform
      model::check_preprocessor_matches(model::read_preprocessor_config(pp.string()), cfg.vision.image_size, pp.string());
  } else {
    cfg = model::preset(o.model_preset);
    if (o.image_size > 0) cfg.vision.image_size = o.image_size;
    if (!o.tokenizer_name.empty()) {
      tok = text::Tokenizer::from_dir(o.tokenizer_name);
      cfg.text.vocab_size = static_cast<int>(tok->vocab_size());
    }
  }
  if (tok && tok->vocab_size() > static_cast<size_t>(cfg.text.vocab_size))  // an id past the table: CUDA assert
    fail("the tokenizer has ", tok->vocab_size(), " ids but the model's text embeddings hold ", cfg.text.vocab_size,
         ": use the checkpoint's own tokenizer (or a --model_preset with --tokenizer_name)");
  if (o.dropout >= 0) cfg.text.hidden_dropout_prob = cfg.text.attention_probs_dropout_prob = o.dropout;
  const int image_size = cfg.vision.image_size;
  if (o.image_size > 0 && o.image_size != image_size)
    fail("--image_size ", o.image_size, " differs from the model's vision image_size ", image_size,
         " (its position embeddings are sized for it)");

  // Dataset-size checks before writing anything (demo data is ours and big enough).
  const int B = o.per_device_train_batch_size;
  auto rows_per_rank = [&](const data::Dataset& ds) {
    return (ds.size() + static_cast<size_t>(o.world_size) - 1) / static_cast<size_t>(o.world_size);
  };
  if (train_ds && rows_per_rank(*train_ds) < static_cast<size_t>(B) * o.gradient_accumulation_steps)
    fail(train_flag, " ", train_path, ": ", train_ds->size(), " rows, fewer than one step needs (",
         "--per_device_train_batch_size ", B, " x --gradient_accumulation_steps ", o.gradient_accumulation_steps,
         " x ranks ", o.world_size, ")");

  // From here on output_dir is written (by rank 0; the others wait for it at the barriers).
  group->barrier();
  if (main_rank) fs::create_directories(out);
  if (main_rank && o.overwrite_output_dir && resume_dir.empty()) clear_previous_run(out);
  if (main_rank) remove_stale_staging(out);
  if (demo) {
    const fs::path base = out / "demo_data";
    if (main_rank) make_demo_data(out, !talk);
    group->barrier();
    const std::string t = (base / "train").string(), v = (base / "validation").string();
    train_path = t;
    val_path = v;
    train_ds = open_data(train_path, o, "--train_file");
    val_ds = open_data(val_path, o, "--validation_file");
  }
  if (!tok) {
    std::vector<std::string> captions;
    for (size_t i = 0; i < train_ds->size(); ++i) captions.push_back(train_ds->caption(i));
    tok = text::train_tokenizer(captions, kDemoVocabSize);
    cfg.text.vocab_size = static_cast<int>(tok->vocab_size());
    if (talk) std::printf("built a %zu-token BPE vocabulary from the training captions\n", tok->vocab_size());
  }

  // Model.
  // On a GPU the parameters are made and randomly initialised there (the large preset's 866M values take seconds
  // on one CPU thread); the CPU path is unchanged, so CPU runs keep their exact initial weights.
  model::BridgeTowerForContrastiveLearning model(cfg, device.is_cuda() ? torch::TensorOptions().device(device)
                                                                       : torch::TensorOptions());
  if (resume_dir.empty() && !o.model_name_or_path.empty()) model->load_weights(o.model_name_or_path, true);
  if (o.freeze_vision_model) model::freeze_parameters(*model, model::kVisionTowerPrefix);
  if (o.freeze_text_model) model::freeze_parameters(*model, model::kTextTowerPrefix);
  if (o.freeze_text_pooler) model::freeze_parameters(*model, model::kTextPoolerPrefix);
  model->to(device);
  model->train();
  if (device.is_cuda()) register_cuda_ops();  // the fused QuickGELU kernels (a no-op without them)
  AdamW opt = make_adamw(*model, {o.learning_rate, o.adam_beta1, o.adam_beta2, o.adam_epsilon, o.weight_decay});

  // Loaders and the step plan.
  // Several ranks with dedupe: dedupe the global batch once (the same order on every rank), then shard it.
  loader::LoaderOptions train_lo = loader_options(o, image_size, B, true);
  train_lo.sampler.row_group_ends = train_locality.row_group_ends;
  train_lo.sampler.shuffle_window_groups = train_locality.shuffle_window_groups;
  std::shared_ptr<loader::GlobalOrderView> global_view;
  if (o.world_size > 1 && train_lo.sampler.dedupe_images_in_batch) {
    loader::SamplerOptions g = train_lo.sampler;
    g.batch_size = static_cast<size_t>(B) * static_cast<size_t>(o.world_size);
    global_view = std::make_shared<loader::GlobalOrderView>(train_ds, g);
    train_lo.sampler.shuffle = false;  // the view is already in (locality-)shuffled, deduplicated global order
    train_lo.sampler.dedupe_images_in_batch = false;
    train_lo.sampler.row_group_ends.clear();
  }
  loader::Loader train_loader(global_view ? std::shared_ptr<const data::Dataset>(global_view) : train_ds, train_lo);
  const size_t batches_per_epoch = train_loader.sampler().rows_per_epoch() / static_cast<size_t>(B);
  const int64_t steps_per_epoch = static_cast<int64_t>(batches_per_epoch) / o.gradient_accumulation_steps;
  if (steps_per_epoch < 1) fail("--train_file ", train_path, ": too few rows for one optimizer step");
  if (o.eval_steps < 0) o.eval_steps = steps_per_epoch;  // HF's eval/save_strategy epoch
  if (o.save_steps < 0) o.save_steps = steps_per_epoch;
  const int64_t total_steps = o.max_steps > 0 ? o.max_steps
                                              : static_cast<int64_t>(std::ceil(o.num_train_epochs * steps_per_epoch));
  Schedule sched{parse_schedule_type(o.lr_scheduler_type), resolve_warmup_steps(o.warmup_steps, o.warmup_ratio, total_steps),
                 total_steps};
  std::unique_ptr<loader::Loader> val_loader;
  if (val_ds)
    val_loader = std::make_unique<loader::Loader>(val_ds, loader_options(o, image_size, o.per_device_eval_batch_size, false));

  TrainerState st;
  st.settings = {{"per_device_train_batch_size", B},
                 {"gradient_accumulation_steps", o.gradient_accumulation_steps},
                 {"world_size", o.world_size},
                 {"seed", o.seed},
                 {"total_steps", total_steps},
                 {"steps_per_epoch", steps_per_epoch}, {"logging_steps", o.logging_steps}, {"eval_steps", o.eval_steps},
                 {"save_steps", o.save_steps}, {"num_train_epochs", o.num_train_epochs}};  // the last five: HF's state
  if (!resume_dir.empty()) {
    st = load_checkpoint(resume_dir, model, opt);
    if (talk) std::printf("resumed from %s at step %lld\n", resume_dir.c_str(), (long long)st.global_step);
  }
  // Every rank starts from rank 0's weights; gradients are averaged over the ranks each step.
  const auto params = opt.tensors();
  dist::GradientSync sync(*group, params);
  sync.broadcast_parameters();
  if (group->distributed())
    say_early(talk, str("data parallel: ", group->world_size(), " processes (", group->backend(), "), ",
                        o.gather_embeddings ? "contrastive negatives over the global batch" : "per-rank contrastive loss"));
  const int64_t first_step = st.global_step;
  std::optional<MetricsLog> metrics;
  if (main_rank) metrics.emplace(out / "metrics.jsonl", !resume_dir.empty(), st.global_step);
  if (main_rank && !o.tensorboard_dir.empty()) metrics->add_tensorboard(o.tensorboard_dir);

  const bool tty = talk && ProgressBar::stdout_is_tty();
  ProgressBar bar(total_steps, first_step, stdout, tty);
  auto say = [&](const std::string& line) {
    if (talk) bar.log(line);
  };
  say(str("training ", cfg.text.hidden_size, "-wide BridgeTower (", model->count_parameters(true),
          " trainable parameters) on ", train_ds->size(), " rows: ", total_steps, " steps of ",
          B * o.gradient_accumulation_steps * o.world_size, " samples, ", o.dataloader_num_workers,
          " loader workers, device ", device.str(), device.is_cpu() ? str(" (", torch_threads, " torch threads)") : ""));

  // The in-memory upper bound (bench): batches made once, reused; the step loop never waits.
  std::vector<ModelBatch> in_memory;
  if (o.in_memory_batches > 0) {
    BatchSource pre(train_loader, *tok, o.max_seq_length, device, false);
    pre.start(0, 0, std::min<size_t>(batches_per_epoch, o.in_memory_batches));
    double w;
    while (auto mb = pre.next(&w)) {
      mb->pixels = mb->pixels.clone();
      mb->host.reset();
      in_memory.push_back(std::move(*mb));
    }
  }

  ThroughputMeter meter(o.throughput_warmup_steps);
  double window_loss_sum = 0;
  int64_t window_steps = 0;
  double last_grad_norm = 0, first_loss = NAN;
  EvalResult last_eval;
  bool evaluated = false;
  const double t_start = now_s();
  meter.start(t_start);

  auto run_eval = [&]() {
    if (!val_loader || !main_rank) return;  // eval has no collectives: only rank 0 spends the time
    meter.pause(now_s());
    last_eval = evaluate(model, *val_loader, *tok, o.max_seq_length, device, o.bf16);
    evaluated = true;
    meter.resume(now_s());
    const auto& r = last_eval.recall;
    metrics->write(nlohmann::json{{"step", st.global_step},     {"eval_loss", last_eval.loss},
                                   {"eval_i2t_r1", r.i2t_r1},    {"eval_i2t_r5", r.i2t_r5},
                                   {"eval_i2t_r10", r.i2t_r10},  {"eval_t2i_r1", r.t2i_r1},
                                   {"eval_t2i_r5", r.t2i_r5},    {"eval_t2i_r10", r.t2i_r10},
                                   {"eval_samples", last_eval.samples}});
    say(str("eval @ step ", st.global_step, ": loss ", fmt("%.4f", last_eval.loss), " | image->text R@1/5/10 ",
            fmt("%.3f", r.i2t_r1), "/", fmt("%.3f", r.i2t_r5), "/", fmt("%.3f", r.i2t_r10), " | text->image ",
            fmt("%.3f", r.t2i_r1), "/", fmt("%.3f", r.t2i_r5), "/", fmt("%.3f", r.t2i_r10)));
  };
  auto flush_window = [&]() {
    if (window_steps == 0) return;
    WindowStats w = meter.take_window(now_s());
    WindowRecord rec;
    rec.step = st.global_step;
    rec.epoch = static_cast<double>(st.global_step) / static_cast<double>(steps_per_epoch);
    rec.loss = window_loss_sum / static_cast<double>(window_steps);
    rec.lr = o.learning_rate * sched.lr_factor(st.global_step);
    rec.samples_per_s = w.samples_per_s;
    rec.data_wait_percent = w.data_wait_percent;
    rec.grad_norm = last_grad_norm;
    st.last_window_loss = rec.loss;
    window_loss_sum = 0;
    window_steps = 0;
    if (main_rank) metrics->write(rec);
    say(str("step ", rec.step, "/", total_steps, " | loss ", fmt("%.4f", rec.loss), " | lr ", fmt("%.3e", rec.lr),
            " | ", fmt("%.1f", rec.samples_per_s), " samples/s | data wait ", fmt("%.1f", rec.data_wait_percent),
            "% | epoch ", fmt("%.2f", rec.epoch)));
  };
  auto save = [&]() {
    meter.pause(now_s());
    if (main_rank) {
      save_checkpoint(out, model, *tok, opt, sched, st);
      rotate_checkpoints(out, o.save_total_limit);
    }
    group->barrier();  // no rank runs ahead (or exits) before the checkpoint is complete
    meter.resume(now_s());
  };

  BatchSource source(train_loader, *tok, o.max_seq_length, device, o.dataloader_num_workers > 0);
  std::unique_ptr<GpuMediaSource> gpu_source;  // --use_media_pipeline: decode-only batches resized on the GPU
  // The built-in demo shows what training bought: held-out matching and retrieval, before and after.
  std::optional<HeldOutScores> demo_before;
  EmbedOptions demo_eval;
  if (demo && main_rank && resume_dir.empty()) {
    demo_eval.batch_size = o.per_device_eval_batch_size;
    demo_eval.num_workers = o.dataloader_num_workers;
    demo_eval.image_size = image_size;
    demo_eval.max_seq_length = o.max_seq_length;
    demo_eval.device = device;
    demo_eval.bf16 = o.bf16;
    demo_before = held_out_scores(model, *tok, val_path, demo_eval);
    say(str("before training, held out: matching accuracy ", fmt("%.3f", demo_before->matching_accuracy), " (chance ",
            fmt("%.3f", demo_before->matching_chance), "), image->text R@1 ", fmt("%.3f", demo_before->retrieval.i2t_r1),
            " (chance ", fmt("%.3f", 1.0 / double(std::max<int64_t>(demo_before->images, 1))), ")"));
  }

  if (o.use_media_pipeline)
    gpu_source = std::make_unique<GpuMediaSource>(train_loader, *tok, o.max_seq_length,
                                                  GpuMediaOptions{image_size, o.bf16, device});
  bool stopped_early = false;
  size_t mem_i = 0;
  while (st.global_step < total_steps && !stopped_early) {
    const uint64_t epoch = static_cast<uint64_t>(st.global_step / steps_per_epoch);
    const size_t first_batch = static_cast<size_t>(st.global_step % steps_per_epoch) * o.gradient_accumulation_steps;
    const size_t epoch_batches = static_cast<size_t>(steps_per_epoch) * o.gradient_accumulation_steps;
    if (global_view) global_view->set_epoch(epoch);
    if (gpu_source) gpu_source->start(epoch, first_batch, epoch_batches - first_batch);
    else if (in_memory.empty()) source.start(epoch, first_batch, epoch_batches - first_batch);
    do {
      double wait = 0, step_loss = 0;
      int64_t samples = 0;
      for (int a = 0; a < o.gradient_accumulation_steps; ++a) {
        double w = 0;
        std::optional<ModelBatch> holder;
        ModelBatch* mb;
        if (!in_memory.empty()) {
          mb = &in_memory[mem_i++ % in_memory.size()];
        } else {
          holder = gpu_source ? gpu_source->next(&w) : source.next(&w);
          if (!holder) fail("loader ended the epoch early (internal error)");
          mb = &*holder;
        }
        wait += w;
        torch::Tensor loss;
        {
          Bf16Autocast ac(o.bf16, device);
          auto fwd = model->forward(mb->pixels, mb->input_ids, mb->attention_mask, !o.gather_embeddings);
          loss = o.gather_embeddings
                     ? dist::bridgetower_contrastive_loss(*group, fwd.text_embeds, fwd.image_embeds, fwd.cross_embeds,
                                                          model->logit_scale, true)
                     : fwd.loss;
        }
        if (a == o.gradient_accumulation_steps - 1) sync.arm();
        (loss / static_cast<double>(o.gradient_accumulation_steps)).backward();
        if (gpu_source) {  // the GPU still runs this step's kernels: prepare the next batch meanwhile
          double pw = 0;
          gpu_source->prefetch(&pw);
          wait += pw;
        }
        step_loss += loss.detach().item<double>() / o.gradient_accumulation_steps;
        samples += mb->size;
      }
      sync.finish();
      step_loss = group->all_reduce_mean(step_loss);
      last_grad_norm = clip_grad_norm(params, o.max_grad_norm);
      opt.step(o.learning_rate * sched.lr_factor(st.global_step));
      opt.zero_grad();
      ++st.global_step;
      st.epoch = static_cast<uint64_t>(st.global_step / steps_per_epoch);
      st.batch_in_epoch = static_cast<size_t>(st.global_step % steps_per_epoch) * o.gradient_accumulation_steps;
      st.loss_sum += step_loss;
      ++st.loss_steps;
      if (std::isnan(first_loss)) first_loss = step_loss;
      window_loss_sum += step_loss;
      ++window_steps;
      meter.step(now_s(), samples * o.world_size, wait, step_loss);
      if (st.global_step % o.logging_steps == 0 || st.global_step == total_steps) flush_window();
      if (tty)
        bar.update(st.global_step, now_s() - t_start,
                   str("loss ", fmt("%.3f", step_loss), " ", fmt("%.3e", o.learning_rate * sched.lr_factor(st.global_step))));
      if (o.eval_steps > 0 && st.global_step % o.eval_steps == 0) run_eval();
      if (o.save_steps > 0 && st.global_step % o.save_steps == 0) save();
      if (o.stop_after_step > 0 && st.global_step == o.stop_after_step) stopped_early = true;
    } while (!stopped_early && st.global_step < total_steps && st.global_step % steps_per_epoch != 0);
  }
  source.stop();
  if (gpu_source) gpu_source->stop();
  if (talk) bar.finish();

  TrainSummary sum;
  sum.output_dir = o.output_dir;
  sum.global_step = st.global_step;
  sum.max_steps = total_steps, sum.steps_per_epoch = steps_per_epoch;
  if (stopped_early) return sum;  // as if killed: no final outputs
  sum.completed = true;
  flush_window();
  const RunStats rs = meter.finish(now_s());
  if (o.eval_at_end && (!evaluated || o.eval_steps <= 0 || st.global_step % o.eval_steps != 0)) run_eval();
  std::optional<HeldOutScores> demo_after;
  if (demo_before) demo_after = held_out_scores(model, *tok, val_path, demo_eval);

  sum.train_samples_per_second = rs.train_samples_per_second;
  sum.train_runtime = rs.train_runtime;
  sum.train_samples = rs.train_samples;
  sum.train_loss = st.loss_steps ? st.loss_sum / static_cast<double>(st.loss_steps) : 0;
  sum.final_loss = st.last_window_loss;
  sum.first_loss = first_loss;
  sum.data_wait_percent = rs.data_wait_percent;
  if (evaluated) sum.eval_loss = last_eval.loss;
  if (!main_rank) return sum;

  if (o.save_final_model) save_final_model(out, model, *tok);
  fs::path plot = out / "training_plot.png";
  if (o.write_plot) {
    auto recs = read_window_records(out / "metrics.jsonl");
    Series loss{"loss", {}, {}}, sps{"samples/s", {}, {}};
    for (const auto& r : recs) {
      loss.x.push_back(static_cast<double>(r.step)), loss.y.push_back(r.loss);
      sps.x.push_back(static_cast<double>(r.step)), sps.y.push_back(r.samples_per_s);
    }
    write_line_panels_png(plot, str("bridgetune train: ", o.model_name_or_path.empty() ? o.model_preset : o.model_name_or_path),
                          "step", {{"training loss", "loss", {loss}}, {"throughput", "samples/s", {sps}}});
  }
  nlohmann::json results = {{"train_samples_per_second", sum.train_samples_per_second},
                            {"train_runtime", sum.train_runtime},
                            {"train_samples", sum.train_samples},
                            {"train_loss", sum.train_loss},
                            {"final_loss", sum.final_loss},
                            {"data_wait_percent", sum.data_wait_percent},
                            {"world_size", o.world_size},
                            {"global_step", st.global_step},
                            {"throughput_warmup_steps", o.throughput_warmup_steps},
                            {"measured_steps", rs.measured_steps},
                            {"per_device_train_batch_size", B},
                            {"dataloader_num_workers", o.dataloader_num_workers},
                            {"device", device.str()},
                            {"bf16", o.bf16}};
  if (evaluated) {
    results["eval_loss"] = last_eval.loss;
    results["eval_i2t_r1"] = last_eval.recall.i2t_r1, results["eval_i2t_r5"] = last_eval.recall.i2t_r5;
    results["eval_i2t_r10"] = last_eval.recall.i2t_r10, results["eval_t2i_r1"] = last_eval.recall.t2i_r1;
    results["eval_t2i_r5"] = last_eval.recall.t2i_r5, results["eval_t2i_r10"] = last_eval.recall.t2i_r10;
  }
  if (demo_after) {
    results["demo_matching_accuracy_before"] = demo_before->matching_accuracy;
    results["demo_matching_accuracy_after"] = demo_after->matching_accuracy;
    results["demo_matching_chance"] = demo_after->matching_chance;
    results["demo_i2t_r1_before"] = demo_before->retrieval.i2t_r1;
    results["demo_i2t_r1_after"] = demo_after->retrieval.i2t_r1;
    results["demo_t2i_r1_before"] = demo_before->retrieval.t2i_r1;
    results["demo_t2i_r1_after"] = demo_after->retrieval.t2i_r1;
    results["demo_r1_chance"] = 1.0 / double(std::max<int64_t>(demo_after->images, 1));
  }
  write_json_atomic(out / "train_results.json", results);  // last: marks the run finished
  if (talk) {
    std::printf("\n***** train results *****\n");
    for (auto& [k, v] : results.items()) std::printf("  %-28s = %s\n", k.c_str(), v.dump().c_str());
    if (demo_after) {
      auto row = [](const char* what, double before, double after, double chance) {
        std::printf("  %-30s %.3f -> %.3f   (chance %.3f)\n", what, before, after, chance);
      };
      std::printf("\n***** what training bought (held-out demo split, %lld images) *****\n",
                  (long long)demo_after->images);
      row("matching accuracy (5 choices)", demo_before->matching_accuracy, demo_after->matching_accuracy,
          demo_after->matching_chance);
      const double chance = 1.0 / double(std::max<int64_t>(demo_after->images, 1));
      row("image->text R@1", demo_before->retrieval.i2t_r1, demo_after->retrieval.i2t_r1, chance);
      row("text->image R@1", demo_before->retrieval.t2i_r1, demo_after->retrieval.t2i_r1, chance);
    }
    std::printf("\noutputs in %s:\n", out.c_str());
    std::printf("  %-20s %s\n", "results", (out / "train_results.json").c_str());
    std::printf("  %-20s %s\n", "per-window metrics", (out / "metrics.jsonl").c_str());
    if (o.write_plot) std::printf("  %-20s %s\n", "plot", plot.c_str());
    if (o.save_final_model) std::printf("  %-20s %s (config.json, model.safetensors, tokenizer)\n", "final model", out.c_str());
    auto cks = list_checkpoints(out);
    if (!cks.empty()) std::printf("  %-20s %s\n", "latest checkpoint", cks.back().path.c_str());
    std::fflush(stdout);
  }
  return sum;
}

}  // namespace bt::train
