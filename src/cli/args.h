// HfArgumentParser's habits on top of CLI11, decided here once for every command (main.cpp applies them):
//  - `bridgetune CMD args.json|args.yaml [flags]`: the file's keys become flags, placed before the flags given on
//    the command line, which therefore override them;
//  - a repeated single-valued flag: the last one wins (argparse), instead of CLI11's "At Most 1" error;
//  - a flag accepts `--flag`, `--flag=V` and `--flag V` for V in True/False/true/false/1/0/on/off/yes/no;
//  - an unknown flag or command is named with the closest known one.
// Torch-free: tests/cli/args_test.cpp builds it alone.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace bt::cli {

// The closest of `known` to `name` by edit distance, or "" when nothing is close (more than max(2, a third)).
std::string closest_name(const std::string& name, const std::vector<std::string>& known);

// Flags read from an args file (HfArgumentParser.parse_json_file / parse_yaml_file): one `--key value...` group
// per top-level key, in file order; booleans as `--key=true|false`, lists as several values, null skipped.
// Throws bt::Error naming the file for anything but a flat object of scalars and lists (nesting, size > 1 MiB,
// not a regular file, bad syntax).
std::vector<std::string> args_file_flags(const std::string& path);
// The same from the file's text (`yaml`: the flat YAML subset, else JSON); `what` names it in errors.
std::vector<std::string> args_text_flags(const std::string& text, bool yaml, const std::string& what);

// argv (without the program name) rewritten for CLI11 against the registered subcommands of `app`: the args
// file expanded, `--flag VALUE` joined for boolean flags, and every single-valued option of the chosen
// subcommand set to take the last value. Throws bt::Error for an unknown command or flag (with a suggestion).
std::vector<std::string> normalize_args(CLI::App& app, std::vector<std::string> args);

}  // namespace bt::cli
