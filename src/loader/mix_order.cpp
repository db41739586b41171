#include "loader/mix_order.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "common/error.h"
#include "loader/sampler.h"

namespace bt::loader {

namespace {

// An all_exhausted epoch longer than this many times all rows (and past kMinCap) is refused: a tiny weight would
// otherwise make an epoch (and its order in memory) of billions of rows.
constexpr double kMaxOversampling = 16;
constexpr double kMinCap = 1 << 20;

std::string weight_text(double w) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", w);
  return b;
}

void check_plan_input(const std::vector<size_t>& sizes, const std::vector<std::string>& names,
                      const std::vector<double>& weights) {
  if (sizes.empty()) fail("mixing datasets: no datasets given");
  if (sizes.size() > kMaxMixedDatasets) fail("mixing datasets: ", sizes.size(), " given, at most ", kMaxMixedDatasets);
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] == 0) fail("mixing datasets: ", i < names.size() ? names[i] : str("dataset ", i + 1), " has no rows");
  if (weights.empty()) return;
  if (weights.size() != sizes.size())
    fail("--train_mix_weights: ", weights.size(), " weights for ", sizes.size(),
         " datasets; give one per --train_file");
  for (double w : weights)
    if (!(w > 0) || !std::isfinite(w))
      fail("--train_mix_weights: every weight must be a positive number (got ", w, ")");
  // Each finite, their sum need not be (1e308,1e308): its shares would be 0/0.
  if (!std::isfinite(std::accumulate(weights.begin(), weights.end(), 0.0)))
    fail("--train_mix_weights: the weights add up past the largest number; give them as shares (e.g. 0.5,0.5)");
}

// Drawn positions until the stopping rule holds (HF's loop: check, draw, take, mark exhausted and restart).
std::vector<uint16_t> draw_sources(const MixPlan& p, uint64_t seed) {
  const size_t k = p.sizes.size();
  std::vector<double> cumulative(k);
  std::partial_sum(p.weights.begin(), p.weights.end(), cumulative.begin());
  double estimate = 0;  // all_exhausted: the expected epoch is about max_i(n_i / p_i)
  size_t slowest = 0;
  for (size_t i = 0; i < k; ++i)
    if (const double e = static_cast<double>(p.sizes[i]) / p.weights[i]; e > estimate) estimate = e, slowest = i;
  const double cap = std::max(kMaxOversampling * static_cast<double>(p.total_rows()), kMinCap);
  if (p.stopping == MixStopping::kAllExhausted && estimate > cap)
    fail("--train_mix_weights: with all_exhausted, ", p.names.at(slowest), " (", p.sizes[slowest], " rows) at weight ",
         weight_text(p.weights[slowest]), " is read through only after about ", static_cast<size_t>(estimate),
         " draws, more than ", kMaxOversampling, "x all rows; raise its weight or use --train_mix_stopping "
         "first_exhausted");
  std::vector<uint16_t> out;
  std::vector<size_t> taken(k, 0);
  std::vector<bool> exhausted(k, false);
  size_t done = 0;
  uint64_t state = hash_combine(seed, 0x6d69785f6f72646eULL);  // "mix_ordn": a stream of its own
  const size_t hard_limit = static_cast<size_t>(cap) * 4;
  while (p.stopping == MixStopping::kFirstExhausted ? done == 0 : done < k) {
    const double u = static_cast<double>(mix64(state++) >> 11) * 0x1.0p-53;  // uniform in [0, 1)
    size_t i = static_cast<size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
    i = std::min(i, k - 1);  // u at the rounding edge of the last cumulative weight
    out.push_back(static_cast<uint16_t>(i));
    if (++taken[i] == p.sizes[i]) {
      taken[i] = 0;
      if (!exhausted[i]) exhausted[i] = true, ++done;
    }
    if (out.size() > hard_limit)
      fail("mixing datasets: the epoch passed ", hard_limit, " rows; raise the small weights");
  }
  return out;
}

}  // namespace

MixStopping parse_mix_stopping(const std::string& word) {
  if (word == "first_exhausted") return MixStopping::kFirstExhausted;
  if (word == "all_exhausted") return MixStopping::kAllExhausted;
  fail("--train_mix_stopping '", word, "': must be first_exhausted or all_exhausted (HF's stopping_strategy)");
}

std::vector<double> parse_mix_weights(const std::string& text) {
  std::string t = text;
  std::replace(t.begin(), t.end(), ',', ' ');
  std::istringstream in(t);
  std::vector<double> out;
  for (std::string word; in >> word;) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size()) fail("--train_mix_weights '", text, "': '", word, "' is not a number (give e.g. 0.7,0.3)");
    out.push_back(v);
  }
  if (out.empty()) fail("--train_mix_weights '", text, "': no weights (give e.g. 0.7,0.3)");
  return out;
}

size_t MixPlan::total_rows() const { return std::accumulate(sizes.begin(), sizes.end(), size_t{0}); }

std::string MixPlan::summary() const {
  std::ostringstream s;
  s << "mixing " << sizes.size() << " datasets: ";
  for (size_t i = 0; i < sizes.size(); ++i) {
    s << (i ? ", " : "") << names.at(i);
    if (!weights.empty()) s << " " << weight_text(weights[i]);
    s << " (" << sizes[i] << " rows)";
  }
  s << ", " << (weights.empty() ? "round-robin, " : "") << mix_stopping_name(stopping) << ": epoch = " << length()
    << " rows";
  return s.str();
}

std::string MixPlan::identity() const {
  std::ostringstream s;
  s << sizes.size() << " datasets (";
  for (size_t i = 0; i < sizes.size(); ++i) s << (i ? ", " : "") << sizes[i] << " rows";
  s << "), weights ";
  if (weights.empty()) s << "round-robin";
  for (size_t i = 0; i < weights.size(); ++i) s << (i ? "," : "") << weight_text(weights[i]);
  s << ", " << mix_stopping_name(stopping);
  return s.str();
}

MixPlan make_mix_plan(std::vector<std::string> names, std::vector<size_t> sizes, std::vector<double> weights,
                      MixStopping stopping, uint64_t seed) {
  check_plan_input(sizes, names, weights);
  MixPlan p;
  p.names = std::move(names);
  p.sizes = std::move(sizes);
  p.stopping = stopping;
  for (size_t i = p.names.size(); i < p.sizes.size(); ++i) p.names.push_back(str("dataset ", i + 1));
  p.offsets.resize(p.sizes.size());
  std::exclusive_scan(p.sizes.begin(), p.sizes.end(), p.offsets.begin(), size_t{0});
  if (!weights.empty()) {
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    for (double& w : weights) w /= total;
    p.weights = std::move(weights);
    p.source = draw_sources(p, seed);
    return p;
  }
  const size_t k = p.sizes.size();
  const auto [lo, hi] = std::minmax_element(p.sizes.begin(), p.sizes.end());
  const size_t rounds = stopping == MixStopping::kFirstExhausted ? *lo : *hi;
  p.source.resize(rounds * k);
  for (size_t j = 0; j < p.source.size(); ++j) p.source[j] = static_cast<uint16_t>(j % k);
  return p;
}

std::vector<size_t> mix_epoch_order(const MixPlan& plan, bool shuffle, uint64_t seed, uint64_t epoch) {
  const size_t k = plan.sizes.size();
  // perm[offset_i + j]: dataset i's j-th row in its current pass; next[i]: rows of that pass read (size: start one).
  std::vector<size_t> perm(plan.total_rows()), next(plan.sizes), pass(k, 0);
  const uint64_t base = hash_combine(hash_combine(seed, epoch), 0x6d69785f726f7773ULL);  // "mix_rows"
  std::vector<size_t> order;
  order.reserve(plan.length());
  for (uint16_t s : plan.source) {
    const size_t i = s, lo = plan.offsets[i], n = plan.sizes[i];
    if (next[i] == n) {  // a new pass through dataset i (its first, or a restart: all_exhausted)
      for (size_t j = 0; j < n; ++j) perm[lo + j] = lo + j;
      if (shuffle) shuffle_rows(perm, lo, lo + n, hash_combine(hash_combine(base, i), pass[i]++));
      next[i] = 0;
    }
    order.push_back(perm[lo + next[i]++]);
  }
  return order;
}

}  // namespace bt::loader
