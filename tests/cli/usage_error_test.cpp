// CLI11's parse errors in the project's one-line style (src/cli/usage_error.h, issue 57): the flag, the value and
// what it takes, never CLI11's wording.
#include "cli/usage_error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

namespace bt::cli {
namespace {

// The line for `args` given to a `train` subcommand with a few typed flags ("" when they parse).
std::string line_for(std::vector<std::string> args) {
  CLI::App app{"t"};
  CLI::App* train = app.add_subcommand("train", "");
  double lr = 0;
  int steps = 0;
  std::optional<double> part;
  std::string q, qi;
  train->add_option("--learning_rate", lr);
  train->add_option("--max_steps", steps)->check(CLI::PositiveNumber);
  train->add_option("--layer_decay", lr)->check(CLI::Range(1e-6, 1.0));
  train->add_option("--vision_learning_rate", part)->check(CLI::NonNegativeNumber);
  train->add_option("--out", q)->required();
  auto* a = train->add_option("--query", q);
  auto* b = train->add_option("--query_image", qi);
  a->excludes(b);
  args.insert(args.begin(), "train");
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return usage_error_line(app, e);
  }
  return "";
}

TEST(UsageError, EachCli11ErrorIsOneLineNamingTheFlagAndWhatItTakes) {
  const std::string hint = " (bridgetune train --help lists its flags)";
  EXPECT_EQ(line_for({"--out", "o", "--learning_rate", "abc"}),
            "--learning_rate abc: not a number (e.g. 0.5 or 5e-5)" + hint);
  EXPECT_EQ(line_for({"--out", "o", "--max_steps", "1.5"}), "--max_steps 1.5: not a whole number" + hint);
  EXPECT_EQ(line_for({"--out", "o", "--max_steps", "0"}), "--max_steps 0: must be > 0" + hint);
  EXPECT_EQ(line_for({"--out", "o", "--vision_learning_rate", "-1"}), "--vision_learning_rate -1: must be >= 0" + hint);
  EXPECT_EQ(line_for({"--out", "o", "--layer_decay", "2"}), "--layer_decay 2: must be between 1e-06 and 1" + hint);
  EXPECT_EQ(line_for({"--out", "o", "--query", "a", "--query_image", "b"}), "give --query or --query_image, not both" + hint);
  EXPECT_EQ(line_for({}), "--out is required" + hint);
  EXPECT_EQ(line_for({"--out"}), "--out needs a value" + hint);
  EXPECT_EQ(line_for({"--out", "o"}), "");
}

}  // namespace
}  // namespace bt::cli
