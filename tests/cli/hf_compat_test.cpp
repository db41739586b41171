// HF TrainingArguments without an effect here (src/cli/hf_compat.h): accepted with a note or refused with the
// reason; the README's "Coming from HF Trainer" table lists every one.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli/args.h"
#include "cli/hf_compat.h"
#include "common/error.h"

using namespace bt::cli;

namespace {
// Runs `train ARGS` on a tiny app with the compat flags; returns the error ("" when accepted) and stderr.
std::pair<std::string, std::string> run(std::vector<std::string> args) {
  CLI::App app{"t"};
  CLI::App* train = app.add_subcommand("train", "");
  int batch = 1;
  train->add_option("--per_device_train_batch_size", batch);
  add_hf_compat_flags(*train);
  args.insert(args.begin(), "train");
  testing::internal::CaptureStderr();
  std::string error;
  try {
    auto a = normalize_args(app, args);
    std::reverse(a.begin(), a.end());
    app.parse(a);
  } catch (const bt::Error& e) {
    error = e.what();
  }
  return {error, testing::internal::GetCapturedStderr()};
}
}  // namespace

TEST(HfCompat, IgnoredFlagsSayWhy) {
  auto [err, out] = run({"--torch_compile", "--run_name", "exp1", "--dataloader_pin_memory", "True"});
  EXPECT_EQ(err, "");
  EXPECT_NE(out.find("note: --torch_compile ignored"), std::string::npos) << out;
  EXPECT_NE(out.find("note: --run_name ignored"), std::string::npos) << out;
  EXPECT_NE(out.find("note: --dataloader_pin_memory ignored"), std::string::npos) << out;
  EXPECT_EQ(run({"--per_device_train_batch_size", "2"}).second, "");  // nothing given, nothing said
}

TEST(HfCompat, RefusedFlagsStopWithTheReason) {
  EXPECT_NE(run({"--push_to_hub"}).first.find("--push_to_hub: refused: bridgetune never uses the network"),
            std::string::npos);
  EXPECT_EQ(run({"--push_to_hub", "False"}).first, "");  // asks for nothing
  EXPECT_NE(run({"--hub_model_id", "me/model"}).first.find("--hub_model_id me/model: refused"), std::string::npos);
  EXPECT_NE(run({"--optim", "sgd"}).first.find("--optim sgd: only AdamW"), std::string::npos);
  auto [err, out] = run({"--optim", "adamw_torch_fused"});
  EXPECT_EQ(err, "");
  EXPECT_NE(out.find("bridgetune's AdamW"), std::string::npos);
  EXPECT_EQ(run({"--logging_strategy", "steps"}).first, "");
  EXPECT_NE(run({"--logging_strategy", "epoch"}).first.find("only step logging"), std::string::npos);
}

TEST(HfCompat, TheReadmeListsEveryFlag) {
  std::ifstream f(std::string(BT_SOURCE_DIR) + "/README.md");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string readme = ss.str();
  const auto start = readme.find("## Coming from HF Trainer");
  ASSERT_NE(start, std::string::npos);
  for (const auto& flag : hf_compat_flags())
    EXPECT_NE(readme.find("`--" + flag.name + "`", start), std::string::npos) << flag.name;
}
