#include "train/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "common/error.h"

namespace bt::train {

ScheduleType parse_schedule_type(const std::string& name) {
  if (name == "linear") return ScheduleType::kLinear;
  if (name == "cosine") return ScheduleType::kCosine;
  if (name == "constant") return ScheduleType::kConstant;
  if (name == "constant_with_warmup") return ScheduleType::kConstantWithWarmup;
  fail("--lr_scheduler_type: unknown schedule '", name, "' (use linear, cosine, constant or constant_with_warmup)");
}

const char* schedule_name(ScheduleType t) {
  switch (t) {
    case ScheduleType::kLinear: return "linear";
    case ScheduleType::kCosine: return "cosine";
    case ScheduleType::kConstant: return "constant";
    case ScheduleType::kConstantWithWarmup: return "constant_with_warmup";
  }
  return "?";
}

int64_t resolve_warmup_steps(int64_t warmup_steps, double warmup_ratio, int64_t total_steps) {
  if (warmup_steps > 0) return warmup_steps;
  return static_cast<int64_t>(std::ceil(static_cast<double>(total_steps) * warmup_ratio));
}

double Schedule::lr_factor(int64_t step) const {
  const double s = static_cast<double>(step);
  const double w = static_cast<double>(warmup_steps);
  const double t = static_cast<double>(total_steps);
  switch (type) {
    case ScheduleType::kConstant:
      return 1.0;
    case ScheduleType::kConstantWithWarmup:
      if (step < warmup_steps) return s / std::max(1.0, w);
      return 1.0;
    case ScheduleType::kLinear:
      if (step < warmup_steps) return s / std::max(1.0, w);
      return std::max(0.0, (t - s) / std::max(1.0, t - w));
    case ScheduleType::kCosine: {
      if (step < warmup_steps) return s / std::max(1.0, w);
      const double progress = (s - w) / std::max(1.0, t - w);
      return std::max(0.0, 0.5 * (1.0 + std::cos(std::numbers::pi * num_cycles * 2.0 * progress)));
    }
  }
  return 1.0;
}

int64_t first_schedule_difference(const Schedule& was, const Schedule& now, int64_t from) {
  for (int64_t step = std::max<int64_t>(from, 0); step < now.total_steps; ++step) {
    const double a = was.lr_factor(std::min(step, was.total_steps)), b = now.lr_factor(step);
    if (std::fabs(a - b) > 1e-12 * std::max(1.0, std::fabs(a))) return step;
  }
  return -1;
}

}  // namespace bt::train
