// The setup of one `bridgetune train` run (train_setup.cpp), internal to the trainer: everything the step loop
// (trainer.cpp) needs, built in the order the contract of train/trainer.h asks for -- every check that can fail
// on user input first, then output_dir is written, then data, model, optimizer, loaders and the resumed state.
#pragma once
#include <torch/torch.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "data/dataset.h"
#include "dist/grad_sync.h"
#include "dist/process_group.h"
#include "eval/torch/embed_eval.h"
#include "eval/torch/matching_source.h"
#include "loader/global_order.h"
#include "loader/loader.h"
#include "model/bridgetower.h"
#include "model/flops.h"
#include "source/source.h"
#include "text/tokenizer.h"
#include "train/loss_scale.h"
#include "train/model_selection.h"
#include "train/output_lock.h"
#include "train/run_settings.h"
#include "train/schedule.h"
#include "train/torch/checkpoint.h"
#include "train/torch/optim.h"
#include "train/torch/step_profiler.h"
#include "train/trainer.h"

namespace bt::train {

// A run: the user's options and their resolution (const), what the device and the data resolve (set once, by
// setup_run), and the machinery the step loop drives.
struct TrainRun {
  TrainRun(const TrainOptions& options, const RunSettings& settings, const TrainHooks& run_hooks)
      : o(options), s(settings), hooks(run_hooks) {}
  const TrainOptions& o;  // as the user gave it
  const RunSettings& s;   // what the run uses (train/run_settings.h)
  const TrainHooks& hooks;
  // Resolved by setup_run from the device, the checkpoint and the data.
  torch::Device device = torch::kCPU;
  int torch_threads = 1;
  bool device_jpegs = false;  // --media_decode: JPEGs decoded on the device (GpuMediaPipeline decides)
  std::string model_dir, tokenizer_dir;  // --model_name_or_path / --tokenizer_name with hub ids made folders
  bool main_rank = true, talk = true;  // talk: rank 0 and not quiet
  std::filesystem::path out, resume_dir;  // resume_dir empty: a fresh run
  // The validation split's matching questions when it has the contest's shape (matching_source.h): every
  // evaluation then also reports eval_matching_accuracy. val_matching_path "" : not matching-shaped.
  std::string val_matching_path;
  Selection selection;  // --metric_for_best_model and friends
  StepPlan plan;        // steps per epoch, total steps, eval/save steps, LR schedule
  loader::SamplerOptions train_locality;  // parquet's row-group windows (empty otherwise)
  // Data, model and optimisation.
  std::unique_ptr<dist::Group> group;
  std::unique_ptr<OutputDirLock> lock;  // rank 0: this run's hold on output_dir (train/output_lock.h)
  std::shared_ptr<const data::Dataset> train_ds, val_ds;
  std::optional<eval::OpenedMatching> val_matching;
  std::optional<LossScale> loss_scale;  // --fp16 on CUDA (or the test hook): dynamic loss scaling
  model::BridgeTowerConfig cfg;
  std::optional<text::Tokenizer> tok;
  model::BridgeTowerForContrastiveLearning model{nullptr};
  std::optional<AdamW> opt;
  // This run's record of the fast paths taken (TrainSummary::op_paths): the optimizer writes to it, the model's ops
  // while run_train holds it installed (kernels/registry.h).
  std::shared_ptr<kernels::KernelPaths> kernel_paths = std::make_shared<kernels::KernelPaths>();
  std::vector<torch::Tensor> params;
  std::unique_ptr<dist::GradientSync> sync;  // averages gradients over the ranks each step
  // Loaders.
  std::shared_ptr<loader::GlobalOrderView> global_view;  // several ranks with dedupe: the global order
  std::unique_ptr<loader::Loader> train_loader, val_loader;
  TrainerState st;  // the step to start from (non-zero when resuming)
  model::StepFlops flops;  // this rank's model FLOPs so far, counted by the step (contrastive_step.h)
  // Streamed shards: this rank's samples per epoch of the stream, known once the stream has passed an epoch's end
  // (0 until then: the logs say the epoch's length is not known yet; stream_train.h, log_epoch).
  uint64_t stream_epoch_samples = 0;
  std::unique_ptr<StepProfiler> profiler;  // --profile_steps (main rank; null: none)

  int batch() const { return s.train_batch; }
  int image_size() const { return cfg.vision.image_size; }
  // --max_seq_length as this model takes it (model/config.h; checked when the config was loaded).
  int max_seq_length() const { return model::resolve_max_seq_length(o.max_seq_length, cfg.text); }
};

// Checks, output_dir, data, model, optimizer, loaders, resumed state; throws bt::Error naming the flag at fault.
std::unique_ptr<TrainRun> setup_run(const TrainOptions& options, const RunSettings& settings, const TrainHooks& hooks);

// The loader options of the train (train = true: shuffled, this rank's share; device_jpegs: the resolved
// --media_decode) or validation loader.
loader::LoaderOptions loader_options(const TrainOptions& o, const RunSettings& s, const model::BridgeTowerConfig& cfg,
                                     int batch, bool train, bool device_jpegs = false);
// The embedding evaluations' options (matching, the demo's held-out scores) from a run's flags, for a model of `cfg`.
eval::EmbedOptions embed_options(const TrainOptions& o, const RunSettings& s, const model::BridgeTowerConfig& cfg,
                                 const torch::Device& device);

// The source options of a dataset read for `flag` with at most max_rows rows (<= 0: all): the one place run_train's
// datasets and the recipe's final evaluations open theirs.
source::SourceOptions train_source_options(const TrainOptions& o, const RunSettings& s, const std::string& flag,
                                           int64_t max_rows, bool locality_order);

std::string fmt(const char* f, double v);  // printf-style formatting of one number

// What a checkpoint belongs to (resume_check.cpp): the accumulation mode ("none" without accumulation); the model,
// text length, LoRA, dedupe, dataset and dataset mix recorded in its settings; and the refusal of a resume whose
// settings differ (the dataset and mix only unless --resume_with_changed_data), each naming its flag, or that has no
// step left to train; a plan giving a step still to train another learning rate is said in one line
// (train/schedule.h first_schedule_difference).
std::string accumulation_setting(const TrainOptions& o);
nlohmann::json run_identity(const TrainRun& r);
void check_resume_settings(const TrainRun& r);

}  // namespace bt::train
