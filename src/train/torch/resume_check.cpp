// The identity a checkpoint records and a resume must match (train_setup.h: run_identity, check_resume_settings):
// moved out of train_setup.cpp whole, with the dataset mix (loader/mix_order.h) added to the data's identity.
#include <algorithm>
#include <cstdio>

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

// The checkpoint's learning-rate schedule (scheduler.json; older checkpoints: their planned step count with this
// run's type and warm-up).
Schedule saved_schedule(const TrainRun& r, const TrainerState& saved) {
  Schedule was = r.plan.schedule;
  const fs::path file = r.resume_dir / "scheduler.json";
  std::error_code ec;
  if (fs::is_regular_file(file, ec)) {
    const nlohmann::json j = report::read_json_file(file);
    was.type = parse_schedule_type(j.value("type", std::string(schedule_name(was.type))));
    was.warmup_steps = j.value("warmup_steps", was.warmup_steps);
    was.total_steps = j.value("total_steps", was.total_steps);
  } else if (saved.settings.contains("total_steps")) {
    was.total_steps = saved.settings["total_steps"].get<int64_t>();
  }
  return was;
}

// Another step count (or schedule, or warm-up) re-plans the rate under the saved optimizer: where a step still to
// train gets another rate than the checkpoint's run planned, one line says so and where it jumps (issue 57: HF
// resumes with the new plan silently; extending or shortening a run is a choice, so explained, not refused). A
// checkpoint past this run's last step, or at it for a run planned longer, would train nothing: refused. One at the
// last step of the run it was made by is a run stopped before its final files: the resume writes them (a preempted
// job requeued with `latest` finishes).
void check_resume_schedule(const TrainRun& r, const TrainerState& saved, const std::string& dir) {
  const Schedule was = saved_schedule(r, saved), now = r.plan.schedule;
  const bool finishes_its_own_run = saved.global_step == now.total_steps && was.total_steps == now.total_steps;
  if (saved.global_step >= now.total_steps && !finishes_its_own_run)
    fail("--resume_from_checkpoint ", dir, ": it is at step ", saved.global_step, ", and this run ends at step ",
         now.total_steps, " (--max_steps / --num_train_epochs): nothing would be trained; give more steps than ",
         saved.global_step, " (or start a new --output_dir)");
  const int64_t at = first_schedule_difference(was, now, saved.global_step);
  if (at < 0 || !r.talk) return;
  std::printf("note: --resume_from_checkpoint %s: its run planned a %s schedule over %lld steps (warm-up %lld), this "
              "run a %s one over %lld (warm-up %lld; --max_steps / --num_train_epochs / --lr_scheduler_type / "
              "--warmup_*): the learning rate jumps at step %lld from %s to %s of its peak (the same plan continues "
              "the checkpoint's schedule)\n",
              dir.c_str(), schedule_name(was.type), static_cast<long long>(was.total_steps),
              static_cast<long long>(was.warmup_steps), schedule_name(now.type), static_cast<long long>(now.total_steps),
              static_cast<long long>(now.warmup_steps), static_cast<long long>(at),
              fmt("%.3g", was.lr_factor(std::min(at, was.total_steps))).c_str(), fmt("%.3g", now.lr_factor(at)).c_str());
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
  return {{"model", model_source(o)}, {"max_seq_length", r.max_seq_length()}, {"lora", lora},
          {"dedupe_images_in_batch", o.dedupe_images_in_batch},
          {"dataset", streamed ? streamed->identity() : data::fingerprint(*r.train_ds)},
          {"dataset_images", streamed ? std::string("images streamed") : data::image_fingerprint(*r.train_ds)},
          {"train_mix", r.train_locality.mix ? r.train_locality.mix->identity() : "none"},
          {"train_mix_files", o.train_mix_files}};
}

namespace {

// The checkpoint's settings against this run's (the batch, the data order, the model, the data), each refused with
// its flag; the dataset only unless --resume_with_changed_data accepts it, saying so. Keys a checkpoint lacks (older
// ones) are not compared.
void check_resume_identity(const TrainRun& r, const TrainerState& saved, const std::string& dir) {
  const TrainOptions& o = r.o;
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

}  // namespace

// What the run is first (check_resume_identity), then how it goes on from the checkpoint (check_resume_schedule).
void check_resume_settings(const TrainRun& r) {
  const fs::path state = resume_state_file(r.resume_dir);
  const TrainerState saved = TrainerState::from_json(report::read_json_file(state), state.string());
  check_resume_identity(r, saved, r.resume_dir.string());
  check_resume_schedule(r, saved, r.resume_dir.string());
}

}  // namespace bt::train
