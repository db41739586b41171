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
#include "eval/torch/matching_source.h"
#include "loader/global_order.h"
#include "loader/loader.h"
#include "model/bridgetower.h"
#include "source/source.h"
#include "text/tokenizer.h"
#include "train/loss_scale.h"
#include "train/model_selection.h"
#include "train/output_lock.h"
#include "train/schedule.h"
#include "train/torch/checkpoint.h"
#include "train/torch/optim.h"
#include "train/trainer.h"

namespace bt::train {

struct TrainRun {
  TrainOptions o;  // with hub ids resolved to folders
  TrainHooks hooks;
  torch::Device device = torch::kCPU;
  int torch_threads = 1;
  std::unique_ptr<dist::Group> group;
  std::unique_ptr<OutputDirLock> lock;  // rank 0: this run's hold on output_dir (train/output_lock.h)
  bool main_rank = true, talk = true;  // talk: rank 0 and not quiet
  std::filesystem::path out, resume_dir;  // resume_dir empty: a fresh run
  // Data: the demo generates its own (train_path empty on the command line).
  bool demo = false;
  const char* train_flag = "--train_file";
  std::string train_path, val_path;
  std::shared_ptr<const data::Dataset> train_ds, val_ds;
  // The validation split's matching questions when it has the contest's shape (matching_source.h): every
  // evaluation then also reports eval_matching_accuracy. val_matching_path "" : not matching-shaped.
  std::string val_matching_path;
  std::optional<eval::OpenedMatching> val_matching;
  Selection selection;  // --metric_for_best_model and friends, resolved once
  std::optional<LossScale> loss_scale;  // --fp16 on CUDA (or the test hook): dynamic loss scaling
  loader::SamplerOptions train_locality;  // parquet's row-group windows (empty otherwise)
  // Model and optimisation.
  model::BridgeTowerConfig cfg;
  std::optional<text::Tokenizer> tok;
  model::BridgeTowerForContrastiveLearning model{nullptr};
  std::optional<AdamW> opt;
  std::vector<torch::Tensor> params;
  std::unique_ptr<dist::GradientSync> sync;  // averages gradients over the ranks each step
  // Loaders and the step plan.
  std::shared_ptr<loader::GlobalOrderView> global_view;  // several ranks with dedupe: the global order
  std::unique_ptr<loader::Loader> train_loader, val_loader;
  size_t batches_per_epoch = 0;
  int64_t steps_per_epoch = 0, total_steps = 0;
  Schedule sched;
  TrainerState st;  // the step to start from (non-zero when resuming)

  int batch() const { return o.per_device_train_batch_size; }
  int image_size() const { return cfg.vision.image_size; }
};

// Checks, output_dir, data, model, optimizer, loaders, resumed state; throws bt::Error naming the flag at fault.
std::unique_ptr<TrainRun> setup_run(const TrainOptions& options, const TrainHooks& hooks);

// The loader options of the train (train = true: shuffled, this rank's share) or validation loader.
loader::LoaderOptions loader_options(const TrainOptions& o, const model::BridgeTowerConfig& cfg, int batch, bool train);
// The embedding evaluations' options (matching, the demo's held-out scores) from a run's flags.
eval::EmbedOptions embed_options(const TrainOptions& o, int image_size, const torch::Device& device);
// The options of the matching questions read from a validation split.
eval::MatchingSourceOptions matching_source_options(const TrainOptions& o);

// The source options of a dataset read for `flag` (--train_file, --validation_file, --test_file ...) with at most
// max_rows rows (<= 0: all): the one place run_train's datasets and the recipe's final evaluations open theirs.
source::SourceOptions source_options(const TrainOptions& o, const std::string& flag, int64_t max_rows, bool locality_order);

std::string fmt(const char* f, double v);  // printf-style formatting of one number

}  // namespace bt::train
