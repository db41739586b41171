// The one resolution of a train run's options (contract in train/run_settings.h).
#include "train/run_settings.h"

#include <cmath>
#include <optional>
#include <utility>

#include "common/device_name.h"
#include "common/error.h"
#include "loader/sampler.h"
#include "train/demo.h"

namespace bt::train {

namespace {

// HF's save_steps default (its save_strategy "steps" without --save_steps).
constexpr int64_t kHfSaveSteps = 500;

// An interval from its flags: the strategy when given (steps: the given steps, else steps_default), else the steps'
// own encoding (0 never, < 0 each epoch).
Interval interval_of(const std::optional<IntervalStrategy>& strategy, int64_t steps, int64_t steps_default) {
  if (strategy == IntervalStrategy::kNo) return {};
  if (strategy == IntervalStrategy::kEpoch) return {IntervalStrategy::kEpoch, 0};
  if (strategy == IntervalStrategy::kSteps) return {IntervalStrategy::kSteps, steps > 0 ? steps : steps_default};
  if (steps < 0) return {IntervalStrategy::kEpoch, 0};
  return steps > 0 ? Interval{IntervalStrategy::kSteps, steps} : Interval{};
}

void resolve_data(const TrainOptions& o, const TrainInputs& in, RunSettings& s) {
  if (!in.train_path.empty()) {
    s.train_flag = "--dataset_name", s.train_path = in.train_path, s.train_data = in.train_named;
  } else if (!o.train_shards.empty()) {
    s.train_flag = "--train_shards", s.train_path = o.train_shards;
  } else {
    s.train_flag = "--train_file", s.train_path = o.train_file;
    for (size_t i = 0; i < o.train_mix_files.size(); ++i)  // a mix: every file in errors
      s.train_data += (i ? "," : "--train_file ") + o.train_mix_files[i];
  }
  s.validation_path = in.validation_path.value_or(o.validation_file);
  if (!o.train_mix_weights.empty() && o.train_mix_files.empty())
    fail("--train_mix_weights needs several --train_file (one weight each: --train_file a --train_file b "
         "--train_mix_weights 0.7,0.3)");
  if (o.demo && !s.train_path.empty())
    fail("--demo trains on its own generated data: give it without ", s.train_flag, " (or drop --demo)");
  if (o.demo && !in.train) fail("--demo trains the demo model: it needs training (--do_train, or no --do_* flag)");
  if (s.train_path.empty() && in.train && !o.demo)
    fail("no training data: give --train_file (or --train_shards, --dataset_name); --demo trains on the built-in "
         "demo's generated cartoons instead");
  s.demo = o.demo;
  if (s.demo) {
    if (!o.validation_file.empty()) fail("--validation_file needs --train_file (the demo makes its own split)");
    s.train_path = demo::train_dir(o.output_dir);
    s.validation_path = demo::validation_dir(o.output_dir);
    s.train_data = "the demo's generated data " + s.train_path;
  }
  if (s.train_data.empty()) s.train_data = s.train_flag + " " + s.train_path;
  s.read = o.read;
}

// --eval/save_strategy over --eval/save_steps (the demo's epoch where not given), and the best-model rule.
void resolve_intervals(const TrainOptions& o, RunSettings& s) {
  const int64_t demo_steps = s.demo ? demo::kEpochSteps : 0;
  s.eval = interval_of(o.eval_strategy, o.eval_steps.value_or(demo_steps), s.logging_steps);
  s.save = interval_of(o.save_strategy, o.save_steps.value_or(demo_steps), kHfSaveSteps);
  if (o.load_best_model_at_end && !o.save_strategy && !o.save_steps && s.save.strategy == IntervalStrategy::kNo &&
      s.eval.strategy != IntervalStrategy::kNo) {
    s.save = s.eval;
    s.notes.push_back("note: --load_best_model_at_end: a checkpoint at every evaluation (--save_strategy as --eval_strategy)");
  }
}

void resolve_precision(const TrainOptions& o, RunSettings& s) {
  s.bf16 = o.bf16;
  if (!o.fp16 || o.bf16) return;
  if (names_cuda(o.device)) {
    s.fp16 = true;  // fp16 autocast + dynamic loss scaling (GPUs without bf16: V100, T4)
    s.notes.push_back("note: --fp16: fp16 autocast with dynamic loss scaling (inf/NaN steps are skipped)");
  } else {
    s.bf16 = true;
    s.notes.push_back("note: --fp16: on CPU this build's mixed precision is bf16 autocast; using it (as --bf16)");
  }
}

// Flags that together do nothing or contradict each other (issue 57): each refused, or explained, in one line.
void check_combinations(const TrainOptions& o, const TrainInputs& in, RunSettings& s) {
  if (in.train && s.eval.strategy != IntervalStrategy::kNo && s.validation_path.empty())
    fail(o.eval_strategy ? str("--eval_strategy ", strategy_name(*o.eval_strategy))
                         : str("--eval_steps ", o.eval_steps.value_or(0)),
         " evaluates during training, but there is no validation data: give --validation_file (or --dataset_name "
         "with a validation split)");
  auto frozen_rate = [](bool frozen, const std::optional<double>& rate, const char* freeze, const char* flag) {
    if (frozen && rate)
      fail(freeze, " keeps that tower's weights fixed, so ", flag, " ", *rate, " would have no effect: drop one of them");
  };
  frozen_rate(o.freeze_vision_model, o.vision_learning_rate, "--freeze_vision_model", "--vision_learning_rate");
  frozen_rate(o.freeze_text_model, o.text_learning_rate, "--freeze_text_model", "--text_learning_rate");
  for (const auto& [rate, flag] : {std::pair{o.vision_learning_rate, "--vision_learning_rate"},
                                   std::pair{o.text_learning_rate, "--text_learning_rate"},
                                   std::pair{o.cross_modal_learning_rate, "--cross_modal_learning_rate"}}) {
    if (!rate) continue;
    if (!(*rate >= 0)) fail(flag, " must be >= 0 (got ", *rate, ")");
    if (*rate > 0 && !(s.learning_rate > 0))
      fail(flag, " ", *rate, " needs --learning_rate > 0: each part's rate follows its schedule as a factor of it");
  }
  // Explained, not refused: a preset's LoRA run still measures LoRA's speed and memory (bench/lora).
  if (o.lora_rank > 0 && o.model_name_or_path.empty() && o.resume_from_checkpoint.empty())
    s.notes.push_back(str("note: --lora_rank ", o.lora_rank, " without --model_name_or_path: the adapters train beside "
                          "the --model_preset ", o.model_preset, "'s randomly initialised, frozen weights, which "
                          "learns little; to learn, fine-tune a checkpoint, or train the preset fully (no --lora_rank)"));
}

}  // namespace

const char* strategy_name(IntervalStrategy s) {
  return s == IntervalStrategy::kNo ? "no" : s == IntervalStrategy::kSteps ? "steps" : "epoch";
}

const char* accumulation_name(ContrastiveAccumulation a) {
  return a == ContrastiveAccumulation::kExact ? "exact" : "local";
}

RunSettings resolve_settings(const TrainOptions& o, const TrainInputs& in) {
  RunSettings s;
  resolve_data(o, in, s);
  s.train_batch = o.per_device_train_batch_size.value_or(s.demo ? demo::kBatch : s.train_batch);
  s.learning_rate = o.learning_rate.value_or(s.demo ? demo::kLearningRate : s.learning_rate);
  s.warmup_ratio = o.warmup_ratio.value_or(s.demo ? demo::kWarmupRatio : s.warmup_ratio);
  s.dropout = o.dropout.value_or(s.demo ? demo::kDropout : s.dropout);
  s.logging_steps = o.logging_steps.value_or(s.demo ? demo::kLoggingSteps : s.logging_steps);
  resolve_intervals(o, s);
  s.schedule = parse_schedule_type(o.lr_scheduler_type);
  resolve_precision(o, s);
  check_combinations(o, in, s);
  s.use_media_pipeline = o.use_media_pipeline || in.media_pipeline;
  s.eval_at_end = in.eval_at_end;
  s.tensorboard_dir = in.tensorboard_dir;
  return s;
}

StepPlan plan_steps(size_t rows, const TrainOptions& o, const RunSettings& s) {
  const size_t rows_per_rank = loader::rows_per_rank(rows, o.world_size);
  StepPlan p;
  p.batches_per_epoch = rows_per_rank / static_cast<size_t>(s.train_batch);
  p.steps_per_epoch = static_cast<int64_t>(p.batches_per_epoch) / o.gradient_accumulation_steps;
  if (p.steps_per_epoch < 1)
    fail(s.train_data, ": ", rows, " rows, fewer than one step needs (--per_device_train_batch_size ", s.train_batch,
         " x --gradient_accumulation_steps ", o.gradient_accumulation_steps, " x ranks ", o.world_size, ")");
  p.total_steps = o.max_steps > 0 ? o.max_steps : static_cast<int64_t>(std::ceil(o.num_train_epochs * p.steps_per_epoch));
  auto steps = [&](const Interval& i) { return i.strategy == IntervalStrategy::kEpoch ? p.steps_per_epoch : i.steps; };
  p.eval_steps = steps(s.eval);
  p.save_steps = steps(s.save);
  p.schedule = Schedule{s.schedule, resolve_warmup_steps(o.warmup_steps, s.warmup_ratio, p.total_steps), p.total_steps};
  return p;
}

nlohmann::json effective_arguments(const TrainOptions& o, const RunSettings& s) {
  nlohmann::json j;
  j["learning_rate"] = s.learning_rate;
  j["per_device_train_batch_size"] = s.train_batch;
  j["per_device_eval_batch_size"] = o.per_device_eval_batch_size;
  j["num_train_epochs"] = o.num_train_epochs;
  j["max_steps"] = o.max_steps;
  j["warmup_ratio"] = s.warmup_ratio;
  j["warmup_steps"] = o.warmup_steps;
  j["logging_steps"] = s.logging_steps;
  auto steps = [](const Interval& i) { return i.steps > 0 ? nlohmann::json(i.steps) : nlohmann::json(nullptr); };
  j["eval_strategy"] = strategy_name(s.eval.strategy);
  j["eval_steps"] = steps(s.eval);
  j["save_strategy"] = strategy_name(s.save.strategy);
  j["save_steps"] = steps(s.save);
  j["bf16"] = s.bf16;
  j["fp16"] = s.fp16;  // on CPU --fp16 runs as bf16 autocast (bf16 true)
  j["dropout"] = s.dropout;
  j["seed"] = o.seed;
  j["resume_from_checkpoint"] = o.resume_from_checkpoint.empty() ? nlohmann::json(nullptr)
                                                                  : nlohmann::json(o.resume_from_checkpoint);
  j["world_size"] = o.world_size;
  j["contrastive_accumulation"] = accumulation_name(o.contrastive_accumulation);
  j["gradient_checkpointing"] = o.gradient_checkpointing;
  j["metric_for_best_model"] = o.metric_for_best_model.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.metric_for_best_model);
  j["greater_is_better"] = o.greater_is_better < 0 ? nlohmann::json(nullptr) : nlohmann::json(o.greater_is_better == 1);
  j["load_best_model_at_end"] = o.load_best_model_at_end;
  j["bridgetune_demo"] = s.demo;
  if (!o.train_mix_files.empty()) {  // the flag as given shows its last value only
    j["train_file"] = o.train_mix_files;
    j["train_mix_weights"] = o.train_mix_weights.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.train_mix_weights);
    j["train_mix_stopping"] = loader::mix_stopping_name(o.train_mix_stopping);
  }
  return j;
}

}  // namespace bt::train
