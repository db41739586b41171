// `bench --find_max_batch`: the largest micro-batch whose training steps fit a memory budget, found by measuring
// (each probe trains a few steps at one batch size and reports its peak memory), not by a formula. Memory grows
// about linearly with the batch, so after two measurements the next probe is where the line through the two
// nearest ones meets the budget (an interpolation search); the answer is bracketed by a measured fit and either a
// measured non-fit (over the budget, or failed, e.g. out of memory) or the data's row count.
// The guard keeps a probe off a size the line puts far above the budget (on the CPU an over-large probe meets the
// kernel's OOM killer, which ends the whole process, instead of an exception).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bt::train {

struct BatchProbe {
  int batch = 0;
  bool ran = false;            // false: skipped, the line predicted far over the budget
  uint64_t peak_bytes = 0;     // measured (ran and no error), else the prediction
  double samples_per_s = 0;
  std::string error;           // the run failed (out of memory, ...)
  bool fits = false;           // ran, no error, peak within the budget
};

struct BatchSearchOptions {
  uint64_t budget_bytes = 0;
  int first = 2;               // the smallest batch tried (a contrastive batch needs two rows)
  int max_batch = 1 << 16;     // the data's rows: no larger batch can run
  int max_probes = 12;
  double guard = 1.25;         // skip a probe predicted above guard x budget
  int resolution = 32;         // stop once the bracket is within 1/resolution of the fit (memory is noisy that much)
};

struct BatchSearchResult {
  int largest_fit = 0;         // 0: not even `first` fits
  std::string bound;           // what shows largest_fit + 1 does not fit (or that the search stopped early)
  std::vector<BatchProbe> probes;  // in the order run
};

// probe(batch) trains at `batch` and fills ran/peak_bytes/samples_per_s/error; the search sets `fits`.
BatchSearchResult find_max_batch(const std::function<BatchProbe(int)>& probe, const BatchSearchOptions& o);

}  // namespace bt::train
