// HF TrainingArguments that mean nothing here, or that bridgetune does not do (yet): accepted with one line that
// says why, or refused with the reason when going on would silently differ from what an HF user expects. The one
// table of them (hf_compat.cpp) is what the README's "Coming from HF Trainer" section lists.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace bt::cli {

struct HfCompatFlag {
  std::string name;     // without the leading dashes
  bool boolean;         // a switch (`--x`, `--x True|False`); else it takes one value
  bool refused;         // true: a set value (true, for a switch) stops the run with `reason`
  std::string reason;   // the one line printed (accepted) or the error (refused)
  std::vector<std::string> accepted_values;  // values accepted although the flag is otherwise refused
};

const std::vector<HfCompatFlag>& hf_compat_flags();

// Adds every table flag that `cmd` does not define itself; after parsing, each one given prints its line on stderr
// (accepted) or throws bt::Error (refused), from the subcommand's parse-complete callback.
void add_hf_compat_flags(CLI::App& cmd);

}  // namespace bt::cli
