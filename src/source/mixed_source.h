// Several training datasets mixed into one (`--train_file A --train_file B`, or `--train_file A,B`), with Hugging
// Face's interleave_datasets semantics (loader/mix_order.h): each dataset is opened through open_source like a single
// one, the rows concatenated (data/concat_dataset.h), and the Source carries the MixPlan its sampler reads it by.
//
// Contract:
//  - open_mixed opens every path with `opts` (--max_train_samples caps each dataset; no parquet locality order: a
//    mixed epoch reads each dataset in a permutation of its own), then draws the plan from (sizes, weights,
//    stopping, seed). Errors are the datasets' own one-line ones, or mix_order.h's.
//  - split_train_files: the values given, in order, each split at top-level commas (not inside {a,b} brace
//    patterns), except a value that names an existing file or folder as a whole, or a pipe: command.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "loader/mix_order.h"
#include "source/source.h"

namespace bt::source {

struct MixOptions {
  std::vector<double> weights;  // --train_mix_weights; empty: round-robin
  loader::MixStopping stopping = loader::MixStopping::kFirstExhausted;
  uint64_t seed = 42;  // the run's --seed: the interleaving is drawn from it once
};

Source open_mixed(const std::vector<std::string>& paths, const MixOptions& mix, const SourceOptions& opts = {});

std::vector<std::string> split_train_files(const std::vector<std::string>& values);

}  // namespace bt::source
