// The identity a checkpoint records and a resume must match (train_setup.h: run_identity, check_resume_settings):
// moved out of train_setup.cpp whole, with the dataset mix (loader/mix_order.h) added to the data's identity.
#include "common/error.h"
#include "common/terminal.h"
#include "data/fingerprint.h"
#include "data/stream_window.h"
#include "report/run_log.h"
#include "train/checkpoint_dir.h"
#include "train/torch/stream_train.h"
#include "train/torch/train_setup.h"

namespace bt::train {

namespace fs = std::filesystem;

namespace {

std::string model_source(const TrainOptions& o) {
  return !o.model_name_or_path.empty() ? "--model_name_or_path " + o.model_name_or_path
                                       : "--model_preset " + o.model_preset;
}

// The dataset as `settings` records it, told in the terms the saved checkpoint has (older ones lack the images and
// the mix).
std::string data_identity(const nlohmann::json& settings, const nlohmann::json& saved) {
  std::string out = settings["dataset"].get<std::string>();
  if (saved.contains("dataset_images")) out += ", " + settings["dataset_images"].get<std::string>();
  if (saved.contains("train_mix")) out += ", mix " + settings["train_mix"].get<std::string>();
  return out;
}

}  // namespace

// A resumed run must keep the data order and the global batch: refuse a checkpoint made with other settings.
// What decides a step's loss beyond the batch: the accumulation mode when there is accumulation.
std::string accumulation_setting(const TrainOptions& o) {
  return o.gradient_accumulation_steps > 1 ? accumulation_name(o.contrastive_accumulation) : "none";
}

// What a checkpoint belongs to beyond its batch and data order: the model the command names, the text length,
// the dataset (data/fingerprint.h) and how several were mixed (loader/mix_order.h; the files are recorded, not
// compared: moved data is the same data). Recorded in every checkpoint's settings; a resume must match.
nlohmann::json run_identity(const TrainRun& r) {
  const TrainOptions& o = r.o;
  const std::string lora = o.lora_rank > 0 ? str("rank ", o.lora_rank, ", alpha ", o.lora_alpha, ", targets ",
                                                 o.lora_target_modules, ", saved ", o.lora_modules_to_save)
                                           : "none";
  const data::StreamWindowDataset* streamed = streamed_train(r);  // its rows are not all there to hash: its shards'
  return {{"model", model_source(o)}, {"max_seq_length", o.max_seq_length}, {"lora", lora},
          {"dedupe_images_in_batch", o.dedupe_images_in_batch},
          {"dataset", streamed ? streamed->identity() : data::fingerprint(*r.train_ds)},
          {"dataset_images", streamed ? std::string("images streamed") : data::image_fingerprint(*r.train_ds)},
          {"train_mix", r.train_locality.mix ? r.train_locality.mix->identity() : "none"},
          {"train_mix_files", o.train_mix_files}};
}

// Refuses a checkpoint made with other settings (the batch, the data order, the model, the data), each with its
// flag; the dataset only unless --resume_with_changed_data accepts it, saying so. Keys a checkpoint lacks (older
// ones) are not compared.
void check_resume_settings(const TrainRun& r) {
  const TrainOptions& o = r.o;
  const fs::path state = resume_state_file(r.resume_dir);
  const TrainerState saved = TrainerState::from_json(report::read_json_file(state), state.string());
  const std::string dir = r.resume_dir.string();
  auto same = [&](const char* key, const char* what, const nlohmann::json& now) {
    if (!saved.settings.contains(key) || saved.settings[key] == now) return;
    fail("--resume_from_checkpoint ", dir, ": it was made with ", what, " ", saved.settings[key].dump(),
         ", this run has ", now.dump(), "; resume with the same value (or start a new --output_dir)");
  };
  same("per_device_train_batch_size", "--per_device_train_batch_size", r.s.train_batch);
  same("seed", "--seed", o.seed);
  same("world_size", "world size (WORLD_SIZE / torchrun --nproc_per_node)", o.world_size);
  same("contrastive_accumulation", "--contrastive_accumulation", accumulation_setting(o));
  const nlohmann::json now = run_identity(r);
  same("model", "the model", now["model"]);
  same("max_seq_length", "--max_seq_length", now["max_seq_length"]);
  same("lora", "LoRA", now["lora"]);
  same("dedupe_images_in_batch", "--dedupe_images_in_batch", now["dedupe_images_in_batch"]);
  // A resume reads the checkpoint's own tokenizer; a --tokenizer_name given beside it must be that one.
  if (!r.tokenizer_dir.empty())
    if (const std::string why = tokenizer_difference(r.resume_dir, text::Tokenizer::from_dir(r.tokenizer_dir), r.out);
        !why.empty())
      fail("--resume_from_checkpoint ", dir, ": it was made with another tokenizer than --tokenizer_name ",
           r.tokenizer_dir, " (", why, "); resume with the tokenizer it was made with (or start a new --output_dir)");
  if (!saved.settings.contains("dataset")) return;
  const std::string was = data_identity(saved.settings, saved.settings), is = data_identity(now, saved.settings);
  if (was == is) return;
  if (!o.resume_with_changed_data)
    fail("--resume_from_checkpoint ", dir, ": it was made on other data (", was, "; this run's: ", is,
         "); resume on the same data, or pass --resume_with_changed_data to continue on this data on purpose");
  if (r.talk)
    std::printf("note: --resume_with_changed_data: resuming %s (made on %s) on other data (%s)\n",
                printable(dir).c_str(), printable(was).c_str(), printable(is).c_str());
}

}  // namespace bt::train
