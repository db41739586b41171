// --max_model_bytes, the flag of every command that loads a model (train, evaluate, encode, search, forward): the
// limit model/memory_budget.h checks a config.json's model against before anything is allocated. Defined in the flag
// table (cli/flag_table.h).
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>

#include "cli/flag_table.h"

namespace bt::cli {

inline void add_model_memory_flag(CLI::App& app, uint64_t* max_model_bytes) {
  add_flag(app, flags::kMaxModelBytes, *max_model_bytes);
}

}  // namespace bt::cli
