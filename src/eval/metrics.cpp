#include "eval/metrics.h"

#include <utility>

namespace bt::eval {

namespace {

// The recall keys in reading order (model selection's error message lists them so).
constexpr std::pair<const char*, double RetrievalScores::*> kRecall[] = {
    {"i2t_r1", &RetrievalScores::i2t_r1}, {"i2t_r5", &RetrievalScores::i2t_r5}, {"i2t_r10", &RetrievalScores::i2t_r10},
    {"t2i_r1", &RetrievalScores::t2i_r1}, {"t2i_r5", &RetrievalScores::t2i_r5}, {"t2i_r10", &RetrievalScores::t2i_r10}};
constexpr std::pair<const char*, double MatchingScores::*> kMatching[] = {
    {"matching_accuracy", &MatchingScores::accuracy}, {"matching_chance", &MatchingScores::chance}};

}  // namespace

nlohmann::json to_json(const RetrievalScores& s, const std::string& prefix) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, field] : kRecall) j[prefix + "_" + name] = s.*field;
  return j;
}

nlohmann::json to_json(const MatchingScores& s, const std::string& prefix) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, field] : kMatching) j[prefix + "_" + name] = s.*field;
  return j;
}

nlohmann::json to_json(const SplitEval& e, const std::string& prefix) {
  nlohmann::json j = to_json(e.retrieval.scores, prefix);
  j[prefix + "_loss"] = e.retrieval.loss;
  j[prefix + "_samples"] = e.retrieval.pairs;
  if (e.matching) j.update(to_json(e.matching->scores, prefix));
  return j;
}

std::vector<std::string> eval_metric_keys(bool with_matching) {
  std::vector<std::string> keys = {"eval_loss"};
  for (const auto& [name, field] : kRecall) keys.push_back(std::string("eval_") + name);
  if (with_matching)
    for (const auto& [name, field] : kMatching) keys.push_back(std::string("eval_") + name);
  return keys;
}

}  // namespace bt::eval
