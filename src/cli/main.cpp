// bridgetune: one binary, one subcommand per job. See command.h for how commands plug in.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/flag_table.h"
#include "common/error.h"
#include "common/paths.h"
#include "common/runtime.h"
#include "common/terminal.h"
#if BT_CLI_WITH_TORCH
#include "model/runtime.h"
#endif

namespace bt::cli {
std::vector<CommandSpec>& registry() {
  static std::vector<CommandSpec> commands;
  return commands;
}
}  // namespace bt::cli

int main(int argc, char** argv) {
  // The process's runtime -- switches, allocator, OpenBLAS -- before the first allocation (common/runtime.h); torch's
  // threads are each command's (model::torch_threads_for).
#if BT_CLI_WITH_TORCH
  bt::model::init_runtime();
#else
  bt::init_runtime();
#endif
  CLI::App app{"bridgetune: fast contrastive fine-tuning of BridgeTower on image-caption data"};
  app.formatter(bt::cli::grouped_formatter());  // --help: the essentials first (cli/flag_table.h); commands inherit it
  app.require_subcommand(1);
  app.fallthrough(false);
  auto& commands = bt::cli::registry();
  std::sort(commands.begin(), commands.end(),
            [](const auto& a, const auto& b) { return a.order != b.order ? a.order < b.order : a.name < b.name; });
  for (auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    c.setup(*sub);
  }
  app.set_version_flag("--version", std::string("bridgetune ") + BT_VERSION);
  try {
    // HF conventions (args file, last wins, `--flag True`, suggestions): cli/args.h. CLI11 takes them reversed.
    std::vector<std::string> args = bt::cli::normalize_args(app, std::vector<std::string>(argv + 1, argv + argc));
    std::reverse(args.begin(), args.end());
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // CLI11's message quotes what was given (any bytes, any length): one escaped line, as every error.
    std::fprintf(stderr, "error: %s (see --help)\n", bt::error_line(e.what()).c_str());
    return e.get_exit_code();
  } catch (const bt::StopRequested& e) {
    std::fprintf(stderr, "%s\n", bt::error_line(e.what()).c_str());
    return e.exit_code();
  } catch (const std::filesystem::filesystem_error& e) {
    // Not libstdc++'s "filesystem error: status: ... [PATH]": the path first, then why and what to fix.
    std::fprintf(stderr, "error: %s\n", bt::error_line(bt::filesystem_error_line(e)).c_str());
    return 1;
  } catch (const std::exception& e) {
    // Messages quote file names and member names from the data: escape control bytes (common/terminal.h).
    std::fprintf(stderr, "error: %s\n", bt::error_line(e.what()).c_str());
    return 1;
  }
  return 0;
}
