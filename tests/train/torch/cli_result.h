// One bridgetune command run to its end: its exit status and what it printed (stdout and stderr, from its log).
// Shared by the train CLI tests that check refusals and their one-line messages.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "run_bridgetune.h"

namespace bt::test {

struct CliResult {
  int code = -1;
  std::string err;
};

inline CliResult run_cli(const std::vector<std::string>& args, const std::filesystem::path& log) {
  const int code = wait_exit_code(spawn_bridgetune(args, log));
  return {code, slurp(log)};
}

}  // namespace bt::test
