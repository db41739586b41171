// HF argument conventions (src/cli/args.h) against a small CLI11 app shaped like `bridgetune train`.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cli/args.h"
#include "common/error.h"
#include "data/user_command.h"

namespace fs = std::filesystem;
using namespace bt::cli;

namespace {

struct Opts {
  double lr = 5e-5;
  int batch = 16;
  bool bf16 = false;
  bool dct = true;
  std::vector<int> workers;
  std::string out;
};

// Parses `args` (argv without the program name) the way main.cpp does.
Opts parse(std::vector<std::string> args) {
  Opts o;
  CLI::App app{"t"};
  app.require_subcommand(1);
  CLI::App* train = app.add_subcommand("train", "");
  train->add_option("--learning_rate", o.lr);
  train->add_option("--per_device_train_batch_size", o.batch);
  train->add_flag("--bf16", o.bf16);
  train->add_option("--jpeg_dct_scaling", o.dct);
  train->add_option("--workers", o.workers);
  train->add_option("--output_dir", o.out);
  app.add_subcommand("evaluate", "");
  auto a = normalize_args(app, std::move(args));
  std::reverse(a.begin(), a.end());
  app.parse(a);
  return o;
}

fs::path write(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p;
}

std::string error_of(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(CliArgs, RepeatedFlagLastWins) {
  auto o = parse({"train", "--per_device_train_batch_size", "8", "--learning_rate", "1", "--per_device_train_batch_size",
                  "32"});
  EXPECT_EQ(o.batch, 32);
  EXPECT_EQ(o.lr, 1.0);
  // a list option keeps all its values
  EXPECT_EQ(parse({"train", "--workers", "0", "1", "8"}).workers, (std::vector<int>{0, 1, 8}));
}

TEST(CliArgs, BooleanFlagsTakeHfSpellings) {
  EXPECT_FALSE(parse({"train", "--bf16", "False"}).bf16);
  EXPECT_TRUE(parse({"train", "--bf16", "True"}).bf16);
  EXPECT_TRUE(parse({"train", "--bf16"}).bf16);
  EXPECT_FALSE(parse({"train", "--bf16=false"}).bf16);
  EXPECT_FALSE(parse({"train", "--bf16", "off", "--learning_rate", "2"}).bf16);
  EXPECT_TRUE(parse({"train", "--bf16", "--learning_rate", "2"}).bf16);
  EXPECT_FALSE(parse({"train", "--jpeg_dct_scaling", "False"}).dct);
  EXPECT_TRUE(parse({"train", "--bf16", "0", "--bf16", "1"}).bf16);  // repeated: last wins
}

TEST(CliArgs, JsonArgsFileAndCommandLineOverrides) {
  const auto p = write("bt_args_test.json",
                       R"({"learning_rate": 0.001, "per_device_train_batch_size": 4, "bf16": true,
                           "workers": [1, 2], "output_dir": "runs/x", "push_to_nowhere": null})");
  auto o = parse({"train", p.string()});
  EXPECT_EQ(o.lr, 1e-3);
  EXPECT_EQ(o.batch, 4);
  EXPECT_TRUE(o.bf16);
  EXPECT_EQ(o.workers, (std::vector<int>{1, 2}));
  EXPECT_EQ(o.out, "runs/x");
  auto o2 = parse({"train", p.string(), "--per_device_train_batch_size", "64", "--bf16", "False"});
  EXPECT_EQ(o2.batch, 64);
  EXPECT_FALSE(o2.bf16);
}

TEST(CliArgs, YamlArgsFile) {
  const auto p = write("bt_args_test.yaml",
                       "# HF style\nlearning_rate: 2e-5\nper_device_train_batch_size: 12\nbf16: false\n"
                       "output_dir: \"runs/y\"\nworkers:\n  - 3\n  - 4\n");
  auto o = parse({"train", p.string()});
  EXPECT_EQ(o.lr, 2e-5);
  EXPECT_EQ(o.batch, 12);
  EXPECT_FALSE(o.bf16);
  EXPECT_EQ(o.out, "runs/y");
  EXPECT_EQ(o.workers, (std::vector<int>{3, 4}));
}

TEST(CliArgs, BadArgsFilesNameTheFile) {
  const auto nested = write("bt_args_nested.json", R"({"a": {"b": {"c": 1}}})");
  EXPECT_NE(error_of({"train", nested.string()}).find("bt_args_nested.json: args file nests"), std::string::npos);
  const auto bad = write("bt_args_bad.json", "{not json");
  EXPECT_NE(error_of({"train", bad.string()}).find("bt_args_bad.json: not valid JSON"), std::string::npos);
  EXPECT_NE(error_of({"train", "/nonexistent/a.json"}).find("a.json: args file not found"), std::string::npos);
  const fs::path fifo = fs::temp_directory_path() / "bt_args_fifo.json";
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of({"train", fifo.string()}).find("not a regular file"), std::string::npos);  // never opened
  fs::remove(fifo);
  const auto yaml = write("bt_args_nested.yaml", "model:\n  name: x\n");
  EXPECT_NE(error_of({"train", yaml.string()}).find("bt_args_nested.yaml:2: nested YAML"), std::string::npos);
}

// Issue 53: only what the user typed may run as a pipe: command (data/user_command.h) -- the command line, and the
// args file it names; a NUL in an args-file value and a list for a one-value flag are one short line each, before
// any command runs (so nothing is created under a cut name).
TEST(CliArgs, TypedValuesAreTheOnlyCommandsThatMayRun) {
  EXPECT_FALSE(bt::data::find_user_command("pipe:echo typed-a"));
  parse({"train", "--output_dir", "pipe:echo typed-a"});
  parse({"train", "--output_dir=pipe:echo typed-{b,c}"});
  const auto file = write("bt_args_command.json", R"({"output_dir": "pipe:echo typed-d"})");
  parse({"train", file.string()});
  for (const char* c : {"pipe:echo typed-a", "pipe:echo typed-b", "pipe:echo typed-c", "pipe:echo typed-d"})
    EXPECT_TRUE(bt::data::find_user_command(c)) << c;
  EXPECT_FALSE(bt::data::find_user_command("pipe:echo typed-e"));
}

TEST(CliArgs, ArgsFileNulAndListForOneValueAreShortErrors) {
  const fs::path cut = fs::temp_directory_path() / "bt_args_cut";
  fs::remove_all(cut);
  const auto nul = write("bt_args_nul.json", "{\"output_dir\": \"" + cut.string() + "\\u0000/rest\"}");
  const std::string e = error_of({"train", nul.string()});
  EXPECT_NE(e.find("bt_args_nul.json: the value of 'output_dir' holds a NUL byte"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(cut));
  std::string items;
  for (int i = 0; i < 100000; ++i) items += (i ? ", " : "") + std::to_string(i);
  const auto list = write("bt_args_list.json", "{\"per_device_train_batch_size\": [" + items + "]}");
  const std::string l = error_of({"train", list.string()});
  EXPECT_EQ(l, list.string() + ": 'per_device_train_batch_size' takes one value; the file gives a list of 100000");
  EXPECT_EQ(parse({"train", write("bt_args_one.json", R"({"workers": [1, 2]})").string()}).workers,
            (std::vector<int>{1, 2}));  // a list flag still takes its list
  // The same list on the command line: one short line too (CLI11 listed every extra item).
  std::vector<std::string> argv{"train", "--per_device_train_batch_size"};
  for (int i = 0; i < 100000; ++i) argv.push_back(std::to_string(i));
  EXPECT_EQ(error_of(argv), "--per_device_train_batch_size takes one value; the command line gives 100000 after it");
  EXPECT_EQ(parse({"train", "--workers", "1", "2", "--per_device_train_batch_size", "4"}).batch, 4);
}

TEST(CliArgs, UnknownFlagAndCommandAreNamedWithTheClosest) {
  const std::string e = error_of({"train", "--learning_rat", "1e-4"});
  EXPECT_NE(e.find("unknown flag --learning_rat for `bridgetune train` (did you mean --learning_rate?)"),
            std::string::npos)
      << e;
  const std::string c = error_of({"trian"});
  EXPECT_NE(c.find("unknown command 'trian' (did you mean 'train'?); commands: train, evaluate"), std::string::npos)
      << c;
  EXPECT_EQ(error_of({"train", "--zzzzzzzzzzzz"}).find("did you mean"), std::string::npos);  // nothing close
}

TEST(CliArgs, ClosestName) {
  EXPECT_EQ(closest_name("--learning_rat", {"--seed", "--learning_rate", "--lr_scheduler_type"}), "--learning_rate");
  EXPECT_EQ(closest_name("qqqq", {"train", "evaluate"}), "");
}
