// Every flag that two commands take, each defined once (llama.cpp's common/arg.cpp is the model): its names, the
// default --help shows, its help text, its --help group, the commands that take it, the environment variable that
// sets it when it is not given (flag > environment > default; --help shows "(Env:NAME)"), and where one command's
// default or help differs, that command's variant (FlagDef::variants): the flag stays one entry. Commands register
// them with add_flag/add_switch/add_enum/add_callback_flag (never by hand), the options structs take their defaults
// from common/defaults.h (the same constants the table shows), and `bridgetune flags` prints the table. A flag that
// one command alone takes stays in that command's file. tests/python/test_flag_table.py checks every command's
// --help against the table, and that no flag name two commands take is missing from it. Torch-free (built into
// bt_cli_args; the entries are in flag_entries.cpp).
#pragma once
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cli/enum_flag.h"

namespace bt::cli {

// --help's groups, shared by every command and listed in this order (grouped_formatter): the essentials first,
// HF-only and Gaudi-only flags last.
namespace group {
inline constexpr const char* kEssentials = "Essentials";  // model, data, output, length, batch size, learning rate
inline constexpr const char* kModelData = "Model & data";
inline constexpr const char* kOptimisation = "Optimisation & schedule";
inline constexpr const char* kFineTuning = "Fine-tuning: per-part learning rates, freezing, temperature";
inline constexpr const char* kRuntime = "Loader, media pipeline & runtime";
inline constexpr const char* kCheckpoints = "Logging, checkpoints & resume";
inline constexpr const char* kSelection = "Evaluation & model selection";
inline constexpr const char* kHfRecipe = "HF recipe: phases, outputs, strategies";
inline constexpr const char* kGaudi = "Gaudi-only (accepted, ignored)";
inline constexpr const char* kHfCompat = "HF TrainingArguments without an effect here (accepted with a note, or refused)";
// A command's own flags (CLI11's default group, with -h, listed first): for a shared name whose use is particular to
// each command (--out, --json, --workers, ...).
inline constexpr const char* kOwn = "Options";
}  // namespace group

// --help lists the groups of group:: in that order, after the ones it does not name (CLI11's "Options", with -h, and a
// command's own) in the order of their first flag: set on the top-level app, every subcommand inherits it.
std::shared_ptr<CLI::Formatter> grouped_formatter();

// One command's own default or help for a shared flag (its names, group, environment variable stay the entry's).
struct CommandVariant {
  std::string command;
  std::optional<std::string> default_text;  // as --help shows it there (nullopt: the entry's)
  std::string help = "";                    // "": the entry's
};

struct FlagDef {
  std::string names;                  // "--flag" or "--flag,--alias"
  std::string default_text;           // as --help shows it after '=' ("": none shown)
  std::string help;
  std::string group;                  // one of group::
  std::vector<std::string> commands;  // the commands that register it
  std::string env = "";               // environment variable read when the flag is not given ("": none)
  std::vector<CommandVariant> variants = {};  // the commands whose default or help differs from the above

  // The default and the help `command` shows.
  const std::string& default_for(const std::string& command) const;
  const std::string& help_for(const std::string& command) const;
};

namespace flags {
extern const FlagDef kModelNameOrPath, kModelRevision, kCacheDir, kMaxModelBytes, kModelPreset, kTokenizerName;
extern const FlagDef kTokenizerVocabSize;
extern const FlagDef kDatasetName, kDatasetConfigName, kDatasetRevision, kSplit, kMaxEvalSamples;
extern const FlagDef kImageColumn, kCaptionColumn, kOnBadSample, kMaxLineBytes, kMaxImageBytes;
extern const FlagDef kPerDeviceTrainBatchSize, kPerDeviceEvalBatchSize, kNumWorkers, kMaxSeqLength, kImageSize;
extern const FlagDef kSeed, kDevice, kBf16, kTorchThreads, kPrefetchBatches, kDecodedCacheMb, kMediaDecode;
extern const FlagDef kMaxImagePixels, kJpegDctScaling, kDedupeImagesInBatch, kUseMediaPipeline, kShuffleWindowRowGroups;
extern const FlagDef kData, kValidationFile, kOutputDir, kMaxSteps, kThroughputWarmupSteps;
extern const FlagDef kAttentionBackend, kLoaderWorkerNice, kLoaderWorkerAffinity, kProfileSteps;
extern const FlagDef kWorkers, kRepeats, kBatch, kThreads, kTransform, kOut, kJson;
}  // namespace flags

// Every entry, in the order `bridgetune flags` prints them.
const std::vector<const FlagDef*>& flag_table();

// The first of def.names ("--flag").
std::string flag_name(const FlagDef& def);

// The table's group and environment variable on an option a command created (what add_flag does after add_option).
CLI::Option* apply_def(CLI::Option* opt, const FlagDef& def);

// Whether `opt`'s value came from its environment variable rather than the command line (CLI11 counts both as
// given): train's training_args.json lists under bridgetune_given only what the command line gave.
bool from_environment(const CLI::Option& opt);

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};

// A flag that takes a value, into `target`, whose current value --help shows (the options structs start from the
// same constants as the table's default_for(the command), which the tests check). The help is the entry's
// help_for(app's name). `aliases`: ",--old_name" for this command. An std::optional target (unset unless given)
// shows no default: what it means when unset is in the help.
template <typename T>
CLI::Option* add_flag(CLI::App& app, const FlagDef& def, T& target, const std::string& aliases = "") {
  CLI::Option* opt = app.add_option(def.names + aliases, target, def.help_for(app.get_name()));
  if constexpr (!is_optional<T>::value) opt->capture_default_str();
  return apply_def(opt, def);
}

// A switch (--bf16, --bf16 True|False).
CLI::Option* add_switch(CLI::App& app, const FlagDef& def, bool& target);

// A flag whose value is one of `words` (enum_flag.h).
template <typename Target, typename E>
CLI::Option* add_enum(CLI::App& app, const FlagDef& def, Target& target, EnumWords<E> words) {
  return apply_def(add_enum_flag(app, def.names, target, std::move(words), def.help_for(app.get_name())), def);
}

// A flag whose value `fn` reads (a conversion of its own, e.g. on|off); `shown`: the target's current value as
// --help shows it (the entry's default_for(app's name), which the python test checks).
template <typename T = std::string, typename Fn>
CLI::Option* add_callback_flag(CLI::App& app, const FlagDef& def, Fn&& fn, const std::string& shown = "") {
  CLI::Option* opt = app.add_option_function<T>(def.names, std::forward<Fn>(fn), def.help_for(app.get_name()));
  if (!shown.empty()) opt->default_str(shown);
  return apply_def(opt, def);
}

// The table as a Markdown table (names, default, commands, help with the environment variable and each command's
// variant), grouped as --help groups them: what `bridgetune flags` prints. `json`: one JSON array instead.
std::string flag_table_text(bool json);

}  // namespace bt::cli
