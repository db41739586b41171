#include "train/torch/demo_scores.h"

#include "common/error.h"

namespace bt::train {

std::optional<std::string> DemoScores::measure_before(TrainRun& r) {
  if (!r.s.demo || !r.main_rank || !r.resume_dir.empty()) return std::nullopt;
  options_ = embed_options(r.o, r.s, r.cfg, r.device);
  before_ = eval::held_out_scores(r.model, *r.tok, r.s.validation_path, options_);
  return str("before training, held out: matching accuracy ", fmt("%.3f", before_->matching.accuracy), " (chance ",
             fmt("%.3f", before_->matching.chance), "), image->text R@1 ", fmt("%.3f", before_->retrieval.i2t_r1),
             " (chance ", fmt("%.3f", before_->retrieval.r1_chance), ")");
}

void DemoScores::measure_after(TrainRun& r) {
  if (before_) after_ = eval::held_out_scores(r.model, *r.tok, r.s.validation_path, options_);
}

void DemoScores::add_to(nlohmann::json& results) const {
  if (!after_) return;
  results["demo_matching_accuracy_before"] = before_->matching.accuracy;
  results["demo_matching_accuracy_after"] = after_->matching.accuracy;
  results["demo_matching_chance"] = after_->matching.chance;
  results["demo_i2t_r1_before"] = before_->retrieval.i2t_r1;
  results["demo_i2t_r1_after"] = after_->retrieval.i2t_r1;
  results["demo_t2i_r1_before"] = before_->retrieval.t2i_r1;
  results["demo_t2i_r1_after"] = after_->retrieval.t2i_r1;
  results["demo_r1_chance"] = after_->retrieval.r1_chance;
}

void DemoScores::add_to(report::TrainReport& report) const {
  if (!after_) return;
  const double chance = after_->retrieval.r1_chance;
  report.demo = {{"matching accuracy (5 choices)", before_->matching.accuracy, after_->matching.accuracy,
                  after_->matching.chance},
                 {"image->text R@1", before_->retrieval.i2t_r1, after_->retrieval.i2t_r1, chance},
                 {"text->image R@1", before_->retrieval.t2i_r1, after_->retrieval.t2i_r1, chance}};
  report.demo_images = static_cast<long long>(after_->images);
}

}  // namespace bt::train
