// A command line that cannot run, said in the project's one-line style: CLI11's parse errors ("Could not convert:
// --learning_rate = abc", "--query excludes --query_image", "Value 0 not in range 0.000000 to 1.797693e+308") become
// the flag, the value and what it takes, with the command's --help to look at. main.cpp prints the line after
// "error: " and exits kUsageExitCode for every usage error: these, an unknown flag or command (cli/args.h), and a
// value a flag's own reader refuses while the command line is read (enum_flag.h, hf_compat.h); errors of the run
// itself exit 1. Torch-free (bt_cli_args; tests/cli/usage_error_test.cpp).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace bt::cli {

// argparse's status for a usage error (HfArgumentParser's too), apart from a run's failures (1).
inline constexpr int kUsageExitCode = 2;

// The line (without "error: ") for CLI11's parse error `e` raised while `app` (the top-level app) read its command
// line; the flag it names is looked up in the subcommand that was given, for what its value must be.
std::string usage_error_line(const CLI::App& app, const CLI::ParseError& e);

// " (bridgetune COMMAND --help lists its flags)" for the subcommand `app` parsed, " (bridgetune --help ...)" without.
std::string help_hint(const CLI::App& app);

}  // namespace bt::cli
