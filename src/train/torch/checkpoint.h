// The tensor side of output_dir/checkpoint-N/ (the folder mechanics are in train/checkpoint_dir.h):
//   config.json, model.safetensors      the model, HF layout (loadable by from_pretrained)
//   vocab.json, merges.txt, ...         the tokenizer (text::Tokenizer::save)
//   optimizer.safetensors               AdamW state by parameter name (see optim.h)
//   scheduler.json                      schedule type, warm-up, total steps, last step
//   rng_state.safetensors               torch CPU (and CUDA) generator states
//   trainer_state.json                  the Hugging Face Trainer's state (HF schema, log_history; hf_outputs.h)
//   bridgetune_state.json               global step, data position (epoch, batch), loss sums, run settings: what
//                                       an exact resume reads (kResumeStateFile)
// Written into a staging folder and renamed: a kill at any moment leaves the earlier checkpoints intact.
#pragma once
#include <torch/torch.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "model/bridgetower.h"
#include "text/tokenizer.h"
#include "train/schedule.h"
#include "train/torch/optim.h"

namespace bt::train {

struct TrainerState {
  int64_t global_step = 0;
  uint64_t epoch = 0;         // epoch of the next batch
  size_t batch_in_epoch = 0;  // index of the next batch within that epoch
  double loss_sum = 0;        // sum of per-step losses so far (train_loss = loss_sum / loss_steps)
  int64_t loss_steps = 0;
  double last_window_loss = 0;
  nlohmann::json settings;  // batch size, world size, seed... checked on resume
  nlohmann::json selection;  // model selection's state (ModelSelector::to_json), null without one
  nlohmann::json loss_scale;  // the fp16 loss scaler's state (LossScale::to_json), null without one
  int64_t skipped_samples = 0;  // --on_bad_sample skip: every rank's skips up to this step
  // Every rank's input_ids up to this step, over the runs resumed too (HF's total_flos counts the whole run, as
  // train_loss does; older checkpoints lack it: 0).
  double text_tokens = 0;
  nlohmann::json to_json() const;
  static TrainerState from_json(const nlohmann::json& j, const std::string& what);
};

void save_checkpoint(const std::filesystem::path& output_dir, model::BridgeTowerForContrastiveLearning& model,
                     const text::Tokenizer& tokenizer, const AdamW& optimizer, const Schedule& schedule,
                     const TrainerState& state);

// The final model (config.json, model.safetensors, tokenizer files) into output_dir itself: written into a
// staging folder, fsynced, then each file renamed into place, so no file is ever half-written and a kill
// leaves no *.tmp.<pid> behind in output_dir (a leftover staging folder is removed by remove_stale_staging()).
// merge_lora: LoRA adapters folded into the weights first (model/lora.h), so the folder is a plain checkpoint.
void save_final_model(const std::filesystem::path& output_dir, model::BridgeTowerForContrastiveLearning& model,
                      const text::Tokenizer& tokenizer, bool merge_lora = false);

// Why this run's tokenizer is not the one `checkpoint` was trained with ("" when it is, or when the checkpoint has
// no vocab.json / merges.txt): the files tokenizer.save() would write, compared byte for byte with the checkpoint's
// (written to a staging folder in output_dir, removed again).
std::string tokenizer_difference(const std::filesystem::path& checkpoint, const text::Tokenizer& tokenizer,
                                 const std::filesystem::path& output_dir);

// Restores model weights, optimizer, RNG and returns the trainer state. The model must have the
// checkpoint's architecture (the caller builds it from dir/config.json).
TrainerState load_checkpoint(const std::filesystem::path& dir, model::BridgeTowerForContrastiveLearning& model,
                             AdamW& optimizer);

}  // namespace bt::train
