// What a `train` run uses where that is not simply a flag's value, resolved once: resolve_settings() turns the
// user's TrainOptions (kept as given) and the caller's TrainInputs into a const RunSettings; plan_steps() turns the
// training data's size into the step plan. Torch-free (the device, the decode mode and the data live in
// torch/train_setup.h, which calls both).
//
// Decided here and nowhere else:
//  - the data: the caller's split (--dataset_name), else --train_file / --train_shards; --demo: the built-in demo
//    (train/demo.h), whose recipe fills the flags the user did not give; training without data and without --demo
//    is refused naming the flags (a user naming a model or an output folder meant their own data);
//  - defaults of the flags whose default depends on the run (batch, learning rate, warm-up ratio, dropout, logging
//    steps, eval/save intervals);
//  - HF's strategies as intervals: --eval_strategy steps without --eval_steps evaluates every --logging_steps,
//    --save_strategy steps without --save_steps saves every 500; --eval/save_steps < 0 means every epoch; with
//    --load_best_model_at_end and no save flag, a checkpoint at every evaluation (HF saves every 500 steps by
//    default, so its rule holds out of the box; bridgetune saves nothing by default);
//  - --fp16: fp16 autocast with loss scaling on CUDA, bf16 autocast elsewhere (--bf16 given too: bf16);
//  - "rows for a step": each rank reads ceil(rows / world_size) rows an epoch (the sampler's padding) in batches of
//    per_device_train_batch_size, the short tail dropped, gradient_accumulation_steps batches a step.
#pragma once
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/defaults.h"
#include "source/source.h"
#include "train/schedule.h"
#include "train/trainer.h"

namespace bt::train {

// When evaluations or checkpoints happen: never, every N steps, or every epoch (N: the epoch's steps, plan_steps).
struct Interval {
  IntervalStrategy strategy = IntervalStrategy::kNo;
  int64_t steps = 0;  // kSteps: N > 0
  // The flags' encoding: 0 never, -1 each epoch, N every N steps (resolve_selection's input).
  int64_t as_flag() const { return strategy == IntervalStrategy::kEpoch ? -1 : steps; }
};
const char* strategy_name(IntervalStrategy s);  // "no" | "steps" | "epoch"

struct RunSettings {
  // Data.
  bool demo = false;
  std::string train_path, validation_path;  // validation "": none
  std::string train_flag;  // the flag the training data came from, for the source's messages
  std::string train_data;  // how errors name it: "--train_shards 'a/*.tar'", "--dataset_name org/x (split train)"
  source::ReadOptions read;  // the flags', with the caller's caption column
  // Optimisation and logging (the demo's recipe where the flag was not given).
  int train_batch = defaults::kTrainBatchSize;
  double learning_rate = 5e-5, warmup_ratio = 0, dropout = -1;  // dropout < 0: the model config's
  int64_t logging_steps = 10;
  Interval eval, save;
  ScheduleType schedule = ScheduleType::kLinear;
  // Precision and pipeline.
  bool bf16 = false, fp16 = false;  // fp16: CUDA fp16 autocast + dynamic loss scaling
  bool use_media_pipeline = false;
  // Outputs.
  bool eval_at_end = true;
  std::string tensorboard_dir;
  std::vector<std::string> notes;  // one line per flag whose meaning was resolved here (printed once by the caller)
};

// Throws bt::Error naming the flag for a value no run can use (a strategy's steps, --validation_file without
// training data, an unknown --lr_scheduler_type).
RunSettings resolve_settings(const TrainOptions& options, const TrainInputs& inputs = {});

// The steps the training data makes (see above); the epoch intervals resolved to its steps, the LR schedule. Throws
// bt::Error naming s.train_data when an epoch holds no step.
struct StepPlan {
  size_t batches_per_epoch = 0;
  int64_t steps_per_epoch = 0, total_steps = 0;
  int64_t eval_steps = 0, save_steps = 0;  // 0: never
  Schedule schedule;
};
StepPlan plan_steps(size_t rows, const TrainOptions& options, const RunSettings& s);

// training_args.json's keys whose value the run resolved (HF's names and JSON types): laid over the flags as given.
nlohmann::json effective_arguments(const TrainOptions& options, const RunSettings& s);

}  // namespace bt::train
