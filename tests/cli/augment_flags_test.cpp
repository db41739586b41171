// train's augmentation flags (cli/loader_flags.h: add_augment_flags): a preset, overrides that win whatever their
// order, and one-line errors that name the flag.
#include <gtest/gtest.h>

#include "cli/loader_flags.h"
#include "common/error.h"

namespace bt::cli {
namespace {

media::TransformSpec parse(std::vector<std::string> args) {
  media::AugmentOptions a;
  CLI::App app{"t"};
  add_augment_flags(app, a);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  media::TransformSpec spec;
  media::apply_augment(a, spec);
  return spec;
}

std::string error_of(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CliAugmentFlags, PresetThenOverridesInAnyOrder) {
  EXPECT_EQ(parse({}).mode, media::TransformMode::kEval);
  const media::TransformSpec t = parse({"--train_transform", "train"});
  EXPECT_EQ(t.mode, media::TransformMode::kTrain);
  EXPECT_EQ(t.scale_min, 0.08);
  EXPECT_EQ(t.hflip_p, 0.5);
  const media::TransformSpec s =
      parse({"--rrc_scale", "0.5,0.9", "--train_transform", "strong", "--hflip_p", "0", "--rrc_ratio=1,1.5"});
  EXPECT_EQ(s.scale_min, 0.5);
  EXPECT_EQ(s.scale_max, 0.9);
  EXPECT_EQ(s.ratio_min, 1.0);
  EXPECT_EQ(s.ratio_max, 1.5);
  EXPECT_EQ(s.hflip_p, 0.0);
  EXPECT_EQ(s.color_jitter, (std::array<double, 3>{0.4, 0.4, 0.4}));  // the preset's, not overridden
  const media::TransformSpec f = parse({"--train_transform", "finetune", "--color_jitter", "0.2,0,0.1"});
  EXPECT_EQ(f.scale_min, 0.9);
  EXPECT_EQ(f.hflip_p, 0.0);
  EXPECT_EQ(f.color_jitter, (std::array<double, 3>{0.2, 0, 0.1}));
}

TEST(CliAugmentFlags, ErrorsNameTheFlagOnOneLine) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--train_transform", "random"}, "--train_transform must be eval, train, finetune or strong (got 'random')"},
      {{"--rrc_scale", "0.9,0.5"}, "--rrc_scale: RandomResizedCrop's area fraction must be 0 < a <= b <= 1"},
      {{"--rrc_scale", "0.5"}, "--rrc_scale: expected a,b"},
      {{"--rrc_ratio", "0,1"}, "--rrc_ratio: "},
      {{"--hflip_p", "2"}, "--hflip_p: a probability in [0, 1]"},
      {{"--color_jitter", "0.4,0.4"}, "--color_jitter: expected a,b,c"},
      {{"--color_jitter=0.4,-0.1,0"}, "--color_jitter: brightness, contrast and saturation strengths"},
      {{"--color_jitter", "0.4,0.4,0.4"}, "--color_jitter: the eval transform draws nothing"},
  };
  for (const auto& [args, want] : cases) {
    const std::string got = error_of(args);
    EXPECT_EQ(got.rfind(want, 0), 0u) << args[0] << ": " << got;
    EXPECT_EQ(got.find('\n'), std::string::npos) << got;
  }
}

TEST(CliAugmentFlags, HelpListsEveryPreset) {
  media::AugmentOptions a;
  CLI::App app{"t"};
  add_augment_flags(app, a);
  const std::string help = app.help();
  for (const auto& p : media::kTransformPresets)
    EXPECT_NE(help.find(std::string(p.name) + " (" + std::string(p.help) + ")"), std::string::npos) << p.name;
  for (const char* flag : {"--rrc_scale", "--rrc_ratio", "--hflip_p", "--color_jitter"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
}

}  // namespace
}  // namespace bt::cli
