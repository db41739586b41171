#include "train/loss_scale.h"

#include <cmath>

namespace bt::train {

bool LossScale::update(bool found_nonfinite) {
  if (found_nonfinite) {
    scale_ *= 0.5;  // GradScaler's backoff_factor
    clean_ = 0;
    ++skipped_;
    return false;
  }
  if (++clean_ >= growth_interval_) {
    scale_ *= 2.0;  // growth_factor
    clean_ = 0;
  }
  return true;
}

nlohmann::json LossScale::to_json() const {
  return {{"scale", scale_}, {"clean_steps", clean_}, {"skipped_steps", skipped_}};
}

void LossScale::restore(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("scale") || !j["scale"].is_number()) return;
  const double s = j["scale"].get<double>();
  if (!(s > 0) || !std::isfinite(s)) return;
  scale_ = s;
  clean_ = j.value("clean_steps", int64_t{0});
  skipped_ = j.value("skipped_steps", int64_t{0});
}

}  // namespace bt::train
