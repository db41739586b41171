// Word flags stored as enums (src/cli/enum_flag.h): parsed once where the command line is read, the last one wins
// (cli/args.h), an unknown word names the flag and the words.
#include "cli/enum_flag.h"

#include <gtest/gtest.h>

#include <optional>

#include "cli/args.h"

namespace {

enum class Mode { kAuto, kGpu, kCpu };
const bt::cli::EnumWords<Mode> kWords = {{"auto", Mode::kAuto}, {"gpu", Mode::kGpu}, {"cpu", Mode::kCpu}};

struct Parsed {
  Mode mode = Mode::kAuto;
  std::optional<Mode> strategy;
  std::string default_shown;
};

Parsed parse(std::vector<std::string> args) {
  Parsed p;
  CLI::App app{"t"};
  CLI::App* train = app.add_subcommand("train", "");
  bt::cli::add_enum_flag(*train, "--media_decode", p.mode, kWords, "decode");
  bt::cli::add_enum_flag(*train, "--eval_strategy,--evaluation_strategy", p.strategy, kWords, "strategy");
  p.default_shown = train->get_option("--media_decode")->get_default_str();
  auto a = bt::cli::normalize_args(app, std::move(args));
  std::reverse(a.begin(), a.end());
  app.parse(a);
  return p;
}

}  // namespace

TEST(EnumFlag, WordsBecomeTheEnumAndTheLastOneWins) {
  const Parsed none = parse({"train"});
  EXPECT_EQ(none.mode, Mode::kAuto);
  EXPECT_FALSE(none.strategy.has_value());
  EXPECT_EQ(none.default_shown, "auto");
  const Parsed p = parse({"train", "--media_decode", "gpu", "--evaluation_strategy=cpu", "--media_decode", "cpu"});
  EXPECT_EQ(p.mode, Mode::kCpu);
  EXPECT_EQ(p.strategy, Mode::kCpu);
}

TEST(EnumFlag, AnUnknownWordNamesTheFlagAndTheWords) {
  std::string err;
  try {
    parse({"train", "--evaluation_strategy", "fast"});
  } catch (const bt::Error& e) {
    err = e.what();
  }
  EXPECT_EQ(err, "--eval_strategy must be auto, gpu or cpu (got 'fast')");
}
