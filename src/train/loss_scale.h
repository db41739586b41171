// Dynamic loss scaling for fp16 training (torch.cuda.amp.GradScaler's policy, with its defaults): the loss is
// multiplied by `scale` before backward so small fp16 gradients do not flush to zero; the gradients are divided by
// it before the optimizer step. A step whose gradients hold an inf or NaN is skipped and the scale halves; after
// `growth_interval` clean steps in a row it doubles. Torch-free: the trainer does the tensor work
// (train/torch/contrastive_step.cpp) and keeps this state in its checkpoints, so a resumed run scales as an
// uninterrupted one.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>

namespace bt::train {

class LossScale {
 public:
  explicit LossScale(double init_scale = 65536.0, int64_t growth_interval = 2000)
      : scale_(init_scale), growth_interval_(growth_interval) {}
  double scale() const { return scale_; }
  int64_t skipped_steps() const { return skipped_; }
  // After a step's gradients were checked: true when the optimizer step may run.
  bool update(bool found_nonfinite);

  nlohmann::json to_json() const;
  void restore(const nlohmann::json& j);  // from to_json(); anything else leaves the state as it is

 private:
  double scale_;
  int64_t growth_interval_, clean_ = 0, skipped_ = 0;
};

}  // namespace bt::train
