// Learning-rate schedules with the exact formulas of Hugging Face's `get_scheduler` (transformers.optimization).
// The multiplier for optimizer step s (0-based, i.e. before the s-th update) is lr_factor(s); the trainer logs
// base_lr * lr_factor(global_step) after the update, as HF's `get_last_lr()` does.
// Note: HF's "constant" ignores warm-up entirely; "constant_with_warmup" is the one that ramps up.
#pragma once
#include <cstdint>
#include <string>

namespace bt::train {

enum class ScheduleType { kLinear, kCosine, kConstant, kConstantWithWarmup };

ScheduleType parse_schedule_type(const std::string& name);  // throws bt::Error naming --lr_scheduler_type
const char* schedule_name(ScheduleType t);

// HF TrainingArguments.get_warmup_steps: warmup_steps if > 0, else ceil(total_steps * warmup_ratio).
int64_t resolve_warmup_steps(int64_t warmup_steps, double warmup_ratio, int64_t total_steps);

struct Schedule {
  ScheduleType type = ScheduleType::kLinear;
  int64_t warmup_steps = 0;
  int64_t total_steps = 1;
  double num_cycles = 0.5;  // cosine: HF default (half a cosine wave from 1 down to 0)

  double lr_factor(int64_t step) const;
};

// A resumed run continues `was` (the checkpoint's schedule) from step `from` under `now` (this run's plan): the
// first step in [from, now.total_steps) whose rate differs, as `was` would have trained it (past its end: its last
// rate, the run having finished), or -1 when none does -- a constant rate extended, or the same plan. Any other
// step count, type or warm-up makes the rate jump under the saved optimizer (issue 57: the resume says so).
int64_t first_schedule_difference(const Schedule& was, const Schedule& now, int64_t from);

}  // namespace bt::train
