// Each `bridgetune <command>` lives in its own file under src/cli/ (or src/cli/torch/ when it needs libtorch)
// and registers itself with a static Registrar; main.cpp only dispatches. A command's setup function adds its
// flags to the subcommand and sets its callback. Errors are thrown as bt::Error and printed by main as one
// line, exit code 1 (a usage error, found while the command line is read: 2, cli/usage_error.h).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace bt::cli {

struct CommandSpec {
  std::string name;
  std::string description;
  std::function<void(CLI::App&)> setup;
  int order;  // position in `bridgetune --help`
};

std::vector<CommandSpec>& registry();

struct Registrar {
  Registrar(std::string name, std::string description, int order, std::function<void(CLI::App&)> setup) {
    registry().push_back({std::move(name), std::move(description), std::move(setup), order});
  }
};

}  // namespace bt::cli
