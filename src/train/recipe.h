// The Hugging Face example's recipe around run_train (trainer.h): which phases run, where their data comes from,
// and the files the HF Trainer leaves (hf_outputs.h). `bridgetune train` always goes through here. Torch-free
// header; the orchestration is torch/recipe.cpp.
//
// Contract:
//  - Phases, HF semantics: --do_train trains, --do_eval evaluates the validation split after training (or the given
//    model without --do_train), --do_predict evaluates the test split (metric prefix "test", HF's
//    metric_key_prefix). Without --do_train nothing trains. When none of the three is given, bridgetune's own
//    default holds: train, evaluating on --validation_file (if any) as run_train does, so the demo and scripts
//    written before these flags keep working.
//  - Data: dataset.name (a hub id in the local HF cache, or a folder of the same layout) gives the train /
//    validation / test splits of dataset.config (hub/dataset_files.h; several files of a split are one dataset);
//    otherwise --train_file / --validation_file / --test_file. Every split a phase needs is resolved before
//    anything runs, so an unknown config or split fails first, listing what exists.
//  - Outputs (rank 0), beside run_train's: train_results.json gains HF's epoch / train_steps_per_second /
//    total_flos, eval_results.json and test_results.json (eval_*/test_* loss, runtime, samples and steps per
//    second, retrieval recall, epoch), all_results.json, trainer_state.json (HF schema; also in every checkpoint),
//    training_args.json (HF pickles training_args.bin; the effective values of HF's keys, the flags as given beside
//    them), README.md (model card); the last three only when trained
//    (an eval-only run leaves a trained folder's alone). The final evaluations are run-log records
//    (metrics.jsonl), so they reach log_history and TensorBoard like every other metric.
//  - The built-in demo (train/demo.h) ends by using its model: `encode` + `search` on its held-out pictures.
//  - report_to (report/report_to.h): tensorboard (and wandb, and all): TensorBoard event files under logging_dir
//    (default output_dir/runs/<Mon DD_HH-MM-SS>_<host>, as HF names it); wandb adds one line on syncing them to
//    W&B. mlflow (and all), on rank 0: one MLflow run in the local file store (report/mlflow.h; where: the MLFLOW_*
//    variables HF's MLflowCallback reads) from before training to the end of the final evaluations, named after
//    output_dir's folder (as --run_name's note says; MLFLOW_TAGS' mlflow.runName wins), the run's arguments
//    (training_args.json's) as parameters, every run-log record as metrics at its step; it ends FINISHED, KILLED
//    (stopped by a signal or --stop_after_step) or FAILED.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "hub/dataset_files.h"
#include "report/report_to.h"
#include "train/trainer.h"

namespace bt::train {

using ReportTo = report::ReportTo;  // --report_to: none, all, tensorboard, mlflow, wandb (several at once)

struct RecipeOptions {
  TrainOptions train;                // as given; the recipe resolves it once (train/run_settings.h), never changes it
  TrainHooks hooks;                  // tests: --stop_after_step
  bool do_train = false, do_eval = false, do_predict = false;
  hub::DatasetRef dataset;           // name empty: the --*_file flags
  std::string test_file;             // --do_predict without --dataset_name
  int64_t max_predict_samples = 0;
  ReportTo report_to;                // none
  std::string logging_dir;           // "" default (see above)
  // training_args.json: every flag with its value as given (or its default), and "bridgetune_given" with the flags
  // given; the values the run resolved (effective_arguments, train/run_settings.h) replace HF's keys.
  nlohmann::json arguments;
  // --mediapipe_dataloader / --use_habana_media_pipeline (the Gaudi examples' names): --use_media_pipeline where it
  // can run (--device cuda, a CUDA build); elsewhere one line says so and the CPU loader decodes, so the published
  // command runs as pasted. --use_media_pipeline itself stays a hard requirement.
  bool media_pipeline_where_possible = false;
};

void run_recipe(const RecipeOptions& options);

// HF's default logging_dir: output_dir/runs/<Mon DD_HH-MM-SS>_<host> (local time).
std::string default_logging_dir(const std::string& output_dir);

}  // namespace bt::train
