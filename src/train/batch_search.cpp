#include "train/batch_search.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/error.h"

namespace bt::train {
namespace {

// Memory at `batch` on the line through the two measured probes nearest to it (one probe: the memory taken as
// proportional to the batch, an over-estimate, which errs on the side of the guard). nullopt with none.
std::optional<double> predict(const std::vector<BatchProbe>& probes, int batch) {
  std::vector<const BatchProbe*> measured;
  for (const auto& p : probes)
    if (p.ran && p.error.empty()) measured.push_back(&p);
  if (measured.empty()) return std::nullopt;
  std::sort(measured.begin(), measured.end(), [batch](const BatchProbe* a, const BatchProbe* b) {
    return std::abs(a->batch - batch) < std::abs(b->batch - batch);
  });
  const BatchProbe& a = *measured[0];
  if (measured.size() == 1) return double(a.peak_bytes) * batch / a.batch;
  const BatchProbe& b = *measured[1];
  const double slope = (double(b.peak_bytes) - double(a.peak_bytes)) / double(b.batch - a.batch);
  return double(a.peak_bytes) + std::max(slope, 0.0) * (batch - a.batch);
}

// The batch where the line meets the budget, strictly inside (lo, hi); the midpoint without a usable line.
int next_batch(const std::vector<BatchProbe>& probes, int lo, int hi, uint64_t budget) {
  const int mid = lo + (hi - lo) / 2;
  const auto at_lo = predict(probes, lo), at_hi = predict(probes, hi);
  if (!at_lo || !at_hi || *at_hi <= *at_lo) return mid;
  const double slope = (*at_hi - *at_lo) / (hi - lo);
  const double b = lo + (double(budget) - *at_lo) / slope;
  return std::clamp(static_cast<int>(std::floor(b)), lo + 1, hi - 1);
}

}  // namespace

BatchSearchResult find_max_batch(const std::function<BatchProbe(int)>& probe, const BatchSearchOptions& o) {
  if (o.budget_bytes == 0) fail("find_max_batch: the memory budget must be positive");
  if (o.first < 1 || o.max_batch < o.first) fail("find_max_batch: no batch size between ", o.first, " and ", o.max_batch);
  BatchSearchResult res;
  int lo = 0, hi = o.max_batch + 1;  // lo: the largest measured fit; hi: the smallest known non-fit
  int batch = o.first;
  while (true) {
    if (static_cast<int>(res.probes.size()) >= o.max_probes) {
      res.bound = str("stopped after ", o.max_probes, " probes; ", hi <= o.max_batch ? str(hi, " does not fit") : "no upper bound measured");
      break;
    }
    BatchProbe p;
    const auto predicted = predict(res.probes, batch);
    if (predicted && *predicted > o.guard * double(o.budget_bytes)) {
      p.batch = batch, p.peak_bytes = static_cast<uint64_t>(*predicted);  // not run: it would not fit anyway
    } else {
      p = probe(batch);
      p.batch = batch;
    }
    p.fits = p.ran && p.error.empty() && p.peak_bytes <= o.budget_bytes;
    res.probes.push_back(p);
    if (p.fits) lo = batch;
    else hi = batch;
    if (lo == 0) {  // not even the smallest batch fits
      res.bound = str(batch, " does not fit");
      break;
    }
    if (hi <= lo + std::max(1, lo / std::max(1, o.resolution))) {
      const BatchProbe* at_hi = nullptr;
      for (const auto& q : res.probes)
        if (q.batch == hi) at_hi = &q;
      res.bound = !at_hi ? str("the data has ", o.max_batch, " rows (a larger batch may fit with more rows)")
                  : !at_hi->ran ? str(hi, " is predicted to need more than ", o.guard, "x the budget")
                  : !at_hi->error.empty() ? str(hi, " failed: ", at_hi->error)
                                           : str(hi, " does not fit");
      if (hi > lo + 1 && at_hi)
        res.bound += str(" (", hi - 1 > lo + 1 ? str(lo + 1, "-", hi - 1) : str(lo + 1), " not probed: within the memory's noise)");
      break;
    }
    // Where the line meets the budget; until a non-fit brackets the answer, at most 4x the largest fit (a line
    // drawn through small batches is trusted only so far).
    batch = next_batch(res.probes, lo, hi, o.budget_bytes);
    if (hi > o.max_batch) batch = std::min(batch, 4 * lo);
  }
  res.largest_fit = lo;
  return res;
}

}  // namespace bt::train
