// --max_model_bytes, the flag of every command that loads a model (train, evaluate, encode, search, forward): the
// limit model/memory_budget.h checks a config.json's model against before anything is allocated.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>

namespace bt::cli {

inline void add_model_memory_flag(CLI::App& app, uint64_t* max_model_bytes) {
  app.add_option("--max_model_bytes", *max_model_bytes,
                 "Refuse a model whose weights (+ gradients and AdamW state when training) and activations would "
                 "take more bytes (0: the machine's free memory)")
      ->capture_default_str();
}

}  // namespace bt::cli
