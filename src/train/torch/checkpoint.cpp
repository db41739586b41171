#include "train/torch/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>

#include "common/error.h"
#include "common/file_gate.h"
#include "model/lora.h"
#include "report/hf_outputs.h"
#include "report/run_log.h"
#include "train/checkpoint_dir.h"
#include "train/checkpoint_manifest.h"

namespace bt::train {

nlohmann::json TrainerState::to_json() const {
  return {{"global_step", global_step}, {"epoch", epoch},         {"batch_in_epoch", batch_in_epoch},
          {"loss_sum", loss_sum},       {"loss_steps", loss_steps}, {"last_window_loss", last_window_loss},
          {"settings", settings},       {"selection", selection}, {"loss_scale", loss_scale},
          {"skipped_samples", skipped_samples}, {"text_tokens", text_tokens},
          {"format", "bridgetune-trainer-state-1"}};
}

TrainerState TrainerState::from_json(const nlohmann::json& j, const std::string& what) {
  TrainerState s;
  try {
    s.global_step = j.at("global_step").get<int64_t>();
    s.epoch = j.at("epoch").get<uint64_t>();
    s.batch_in_epoch = j.at("batch_in_epoch").get<size_t>();
    s.loss_sum = j.at("loss_sum").get<double>();
    s.loss_steps = j.at("loss_steps").get<int64_t>();
    s.last_window_loss = j.value("last_window_loss", 0.0);
    s.settings = j.value("settings", nlohmann::json::object());
    s.selection = j.value("selection", nlohmann::json());
    s.loss_scale = j.value("loss_scale", nlohmann::json());
    s.skipped_samples = j.value("skipped_samples", int64_t(0));
    s.text_tokens = j.value("text_tokens", 0.0);
  } catch (const nlohmann::json::exception& e) {
    fail(what, ": bad trainer state: ", e.what());
  }
  return s;
}

namespace {
std::vector<std::pair<std::string, torch::Tensor>> rng_tensors() {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  out.emplace_back("cpu", at::detail::getDefaultCPUGenerator().get_state());
  if (torch::cuda::is_available())
    for (int64_t d = 0; d < static_cast<int64_t>(torch::cuda::device_count()); ++d)
      out.emplace_back("cuda:" + std::to_string(d),
                       at::globalContext().defaultGenerator(at::Device(at::kCUDA, d)).get_state());
  return out;
}
}  // namespace

void save_checkpoint(const std::filesystem::path& output_dir, model::BridgeTowerForContrastiveLearning& model,
                     const text::Tokenizer& tokenizer, const AdamW& optimizer, const Schedule& schedule,
                     const TrainerState& state) {
  StagedDir dir(output_dir, "checkpoint-" + std::to_string(state.global_step));
  const std::string d = dir.path().string();
  model->save_pretrained(d);
  tokenizer.save(d);
  model::save_tensors(d + "/optimizer.safetensors", optimizer.state_tensors());
  report::write_json_atomic(dir.path() / "scheduler.json", {{"type", schedule_name(schedule.type)},
                                                    {"warmup_steps", schedule.warmup_steps},
                                                    {"total_steps", schedule.total_steps},
                                                    {"last_step", state.global_step}});
  model::save_tensors(d + "/rng_state.safetensors", rng_tensors());
  // The Hugging Face Trainer's trainer_state.json (HF schema, log_history from metrics.jsonl) beside ours.
  report::HfStateInfo info = report::hf_state_of_settings(state.settings, state.global_step);
  report::apply_selection(info, state.selection, output_dir, state.global_step);
  report::write_hf_trainer_state(dir.path() / "trainer_state.json", output_dir / "metrics.jsonl", info);
  write_checkpoint_manifest(dir.path(), kResumeStateFile);  // every file's size and checksum, verified on resume
  report::write_json_atomic(dir.path() / kResumeStateFile, state.to_json());  // last: marks the folder complete
  dir.commit();
}

void save_final_model(const std::filesystem::path& output_dir, model::BridgeTowerForContrastiveLearning& model,
                      const text::Tokenizer& tokenizer, bool merge_lora) {
  if (merge_lora) model::merge_lora(*model);
  StagedDir staging(output_dir, "final-model");
  model->save_pretrained(staging.path().string());
  tokenizer.save(staging.path().string());
  publish_final_model(staging.path(), output_dir);  // an earlier run's results go first
}

std::string tokenizer_difference(const std::filesystem::path& checkpoint, const text::Tokenizer& tokenizer,
                                 const std::filesystem::path& output_dir) {
  const char* const files[] = {"vocab.json", "merges.txt"};
  std::error_code ec;
  for (const char* f : files)
    if (!fs::is_regular_file(checkpoint / f, ec)) return "";  // nothing to compare with
  StagedDir scratch(output_dir, "tokenizer-check");  // never committed: removed when it goes out of scope
  tokenizer.save(scratch.path().string());
  for (const char* f : files)
    if (read_small_file((checkpoint / f).string()) != read_small_file((scratch.path() / f).string()))
      return str("its ", f, " differs from this run's tokenizer");
  return "";
}

TrainerState load_checkpoint(const std::filesystem::path& dir, model::BridgeTowerForContrastiveLearning& model,
                             AdamW& optimizer) {
  const std::string d = dir.string();
  const fs::path state_file = resume_state_file(dir);
  TrainerState s = TrainerState::from_json(report::read_json_file(state_file), state_file.string());
  model->load_weights(d);
  optimizer.load_state(model::load_tensors(d + "/optimizer.safetensors"), d + "/optimizer.safetensors");
  auto rng = model::load_tensors(d + "/rng_state.safetensors");
  auto cpu = rng.find("cpu");
  if (cpu == rng.end()) fail(d, "/rng_state.safetensors: no 'cpu' generator state");
  at::Generator cpu_gen = at::detail::getDefaultCPUGenerator();  // a handle sharing the global generator
  cpu_gen.set_state(cpu->second);
  if (torch::cuda::is_available())
    for (auto& [name, t] : rng)
      if (name.rfind("cuda:", 0) == 0) {
        const int64_t dev = std::stoll(name.substr(5));
        if (dev < static_cast<int64_t>(torch::cuda::device_count()))
        {
          at::Generator g = at::globalContext().defaultGenerator(at::Device(at::kCUDA, dev));
          g.set_state(t);
        }
      }
  return s;
}

}  // namespace bt::train
