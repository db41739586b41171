// Several datasets in one run (--train_file A --train_file B): the epoch order of their concatenation
// (data/concat_dataset.h), interleaved with Hugging Face's `interleave_datasets` semantics.
//
// Contract:
//  - MixPlan is drawn once per run from (sizes, weights, stopping, seed), never from the epoch: which dataset each
//    position of an epoch reads (`source`). So every epoch has the same length, the trainer's step plan holds, and
//    HF's interleaved dataset (built once, then read each epoch) is what it mirrors:
//      no weights, first_exhausted: round-robin A B C A B C ... for min(size) rounds (k * min rows);
//      no weights, all_exhausted:   round-robin for max(size) rounds, a shorter dataset restarting (k * max rows);
//      weights (probabilities, normalised): each position reads dataset i with probability p_i from a seeded
//        splitmix stream; first_exhausted stops right after the draw that exhausts any dataset, all_exhausted once
//        every dataset has been read through at least once, an exhausted dataset restarting (oversampling).
//  - mix_epoch_order: position p of epoch e reads the next row of dataset source[p], where dataset i is read in
//    its own permutation of its rows, drawn from (seed, epoch, i, pass) -- a fresh one for each pass through it --
//    or in file order with shuffle off (then the rows are exactly HF's `interleave_datasets` indices). The result
//    is a pure function of (plan, shuffle, seed, epoch): rows of the concatenation, length plan.length().
//  - The sampler (loader/sampler.h) takes this order where it would take its permutation, and shards, pads and
//    dedupes it the same way; resuming at (epoch, position) recomputes it.
//  - Bad plans fail with one line: no datasets, an empty one, weights that are not one positive number per
//    dataset, or an all_exhausted epoch that a tiny weight would make enormous.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bt::loader {

enum class MixStopping { kFirstExhausted, kAllExhausted };
// "first_exhausted" | "all_exhausted", HF's spelling (inline: the torch-free trainer core names it without bt_loader).
inline const char* mix_stopping_name(MixStopping s) {
  return s == MixStopping::kAllExhausted ? "all_exhausted" : "first_exhausted";
}
MixStopping parse_mix_stopping(const std::string& word);  // throws bt::Error naming --train_mix_stopping

// "0.7,0.3" (commas or spaces) -> {0.7, 0.3}; throws bt::Error naming --train_mix_weights for anything else.
std::vector<double> parse_mix_weights(const std::string& text);

struct MixPlan {
  std::vector<std::string> names;  // what the user called each dataset (messages only)
  std::vector<size_t> sizes;       // rows of each dataset, concatenated in this order
  std::vector<size_t> offsets;     // the first row of each in the concatenation
  std::vector<double> weights;     // normalised probabilities; empty: round-robin
  MixStopping stopping = MixStopping::kFirstExhausted;
  std::vector<uint16_t> source;    // per epoch position: the dataset it reads

  size_t length() const { return source.size(); }
  size_t total_rows() const;  // of the concatenation
  // "mixing 2 datasets: A 0.7 (N rows), B 0.3 (M rows), first_exhausted: epoch = K rows"
  std::string summary() const;
  // What a checkpoint records and a resume compares: the weights, sizes and strategy (not the paths: moved data is
  // the same data; the dataset fingerprint covers the content).
  std::string identity() const;
};

inline constexpr size_t kMaxMixedDatasets = 1024;

MixPlan make_mix_plan(std::vector<std::string> names, std::vector<size_t> sizes, std::vector<double> weights,
                      MixStopping stopping, uint64_t seed);

// The epoch's rows of the concatenation (see above).
std::vector<size_t> mix_epoch_order(const MixPlan& plan, bool shuffle, uint64_t seed, uint64_t epoch);

}  // namespace bt::loader
