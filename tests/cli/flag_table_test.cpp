// The shared flags' table (cli/flag_table.h): every options struct starts from the default the table shows (for
// its command), a registered flag gets the table's help (its command's variant), group and environment variable
// (flag > environment > default), and the table is well formed.
// tests/python/test_flag_table.py checks each command's --help against it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "cli/flag_table.h"
#include "cli/hub_flags.h"
#include "cli/loader_flags.h"
#include "eval/evaluate_run.h"
#include "index/embed_index.h"
#include "train/run_settings.h"
#include "train/trainer.h"

namespace bt::cli {
namespace {

template <typename T>
std::string shown(const T& v) {
  return CLI::detail::to_string(v);
}

// Sets an environment variable for one scope (the tests run in one thread).
struct ScopedEnv {
  std::string name;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) { ::setenv(name.c_str(), value, 1); }
  ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

TEST(FlagTable, OptionsStructsStartFromTheTablesDefaults) {
  const train::TrainOptions t;
  const eval::EvaluateOptions e;
  const index::EncodeOptions enc;
  const index::SearchOptions s;
  const loader::LoaderOptions l;
  const source::ReadOptions r;
  EXPECT_EQ(shown(t.dataloader_num_workers), flags::kNumWorkers.default_text);
  EXPECT_EQ(shown(e.dataloader_num_workers), flags::kNumWorkers.default_text);
  EXPECT_EQ(shown(enc.dataloader_num_workers), flags::kNumWorkers.default_text);
  EXPECT_EQ(shown(l.num_workers), flags::kNumWorkers.default_text);
  // Unset: the default, capped to the model's text positions (model/config.h resolve_max_seq_length).
  EXPECT_TRUE(!t.max_seq_length && !e.max_seq_length && !enc.max_seq_length);
  EXPECT_EQ(shown(defaults::kMaxSeqLength), flags::kMaxSeqLength.default_text);
  EXPECT_EQ(shown(t.tokenizer_vocab_size), flags::kTokenizerVocabSize.default_text);
  for (uint64_t v : {t.max_image_pixels, e.max_image_pixels, enc.max_image_pixels})
    EXPECT_EQ(shown(v), flags::kMaxImagePixels.default_text);
  for (int v : {t.per_device_eval_batch_size, e.per_device_eval_batch_size, enc.per_device_eval_batch_size})
    EXPECT_EQ(shown(v), flags::kPerDeviceEvalBatchSize.default_text);
  EXPECT_EQ(shown(train::RunSettings{}.train_batch), flags::kPerDeviceTrainBatchSize.default_text);
  for (const std::string& d : {t.device, e.device, enc.device, s.device}) EXPECT_EQ(d, flags::kDevice.default_text);
  EXPECT_EQ(shown(t.seed), flags::kSeed.default_text);
  EXPECT_EQ(shown(l.sampler.seed), flags::kSeed.default_text);
  EXPECT_EQ(r.image_column, flags::kImageColumn.default_text);
  EXPECT_EQ(shown(r.max_line_bytes), flags::kMaxLineBytes.default_text);
  EXPECT_EQ(shown(r.max_image_bytes), flags::kMaxImageBytes.default_text);
  EXPECT_EQ(enum_word(kOnBadWords, r.on_bad), flags::kOnBadSample.default_text);
  EXPECT_EQ(t.model_preset, flags::kModelPreset.default_text);
  EXPECT_EQ(t.model_revision, flags::kModelRevision.default_text);
  EXPECT_EQ(HubFlags{}.revision, flags::kModelRevision.default_text);
  EXPECT_EQ(shown(t.image_size), flags::kImageSize.default_text);
  EXPECT_EQ(shown(t.torch_threads), flags::kTorchThreads.default_text);
  EXPECT_EQ(shown(t.max_model_bytes), flags::kMaxModelBytes.default_text);
  EXPECT_EQ(shown(t.max_eval_samples), flags::kMaxEvalSamples.default_text);
  EXPECT_EQ(shown(t.prefetch_batches), flags::kPrefetchBatches.default_text);
  EXPECT_EQ(shown(l.prefetch_batches), flags::kPrefetchBatches.default_text);
  EXPECT_EQ(shown(t.decoded_cache_mb), flags::kDecodedCacheMb.default_text);
  EXPECT_EQ(shown(l.decoded_cache_mb), flags::kDecodedCacheMb.default_text);
  EXPECT_EQ(enum_word(kMediaDecodeWords, t.media_decode), flags::kMediaDecode.default_text);
  EXPECT_EQ(shown(l.transform.max_image_pixels), flags::kMaxImagePixels.default_text);
  // The flags whose default differs by command: each command's struct against its variant.
  EXPECT_EQ(t.output_dir, flags::kOutputDir.default_for("train"));
  EXPECT_EQ(e.output_dir, flags::kOutputDir.default_for("evaluate"));
  EXPECT_EQ(shown(t.max_steps), flags::kMaxSteps.default_for("train"));
  EXPECT_EQ(shown(t.throughput_warmup_steps), flags::kThroughputWarmupSteps.default_for("train"));
  EXPECT_EQ(shown(t.jpeg_dct_scaling), flags::kJpegDctScaling.default_for("train"));
  EXPECT_EQ(l.transform.dct_scaling ? "on" : "off", flags::kJpegDctScaling.default_for("bench-loader"));
  EXPECT_EQ(shown(t.dedupe_images_in_batch), flags::kDedupeImagesInBatch.default_for("train"));
  EXPECT_EQ(l.sampler.dedupe_images_in_batch ? "on" : "off", flags::kDedupeImagesInBatch.default_for("bench-loader"));
  EXPECT_EQ(shown(t.shuffle_window_row_groups), flags::kShuffleWindowRowGroups.default_for("train"));
  EXPECT_EQ(shown(l.transform.image_size), flags::kImageSize.default_for("bench-loader"));
  EXPECT_EQ(shown(t.loader_worker_nice), flags::kLoaderWorkerNice.default_text);
}

TEST(FlagTable, EachCommandGetsItsOwnDefaultAndHelpFromOneEntry) {
  const FlagDef& d = flags::kDecodedCacheMb;
  EXPECT_EQ(d.default_for("train"), shown(defaults::kDecodedCacheMb));
  EXPECT_EQ(d.default_for("bench"), "0");
  EXPECT_EQ(d.help_for("train"), d.help);
  EXPECT_NE(d.help_for("bench"), d.help);
  EXPECT_EQ(flags::kJpegDctScaling.help_for("bench-loader"), flags::kJpegDctScaling.help);  // a default-only variant
  for (const char* command : {"train", "bench"}) {
    CLI::App app{"t", command};
    int mb = std::string(command) == "bench" ? 0 : defaults::kDecodedCacheMb;
    CLI::Option* o = add_flag(app, d, mb);
    EXPECT_EQ(o->get_description(), d.help_for(command)) << command;
    EXPECT_EQ(o->get_default_str(), d.default_for(command)) << command;
    EXPECT_EQ(o->get_group(), d.group) << command;
  }
}

TEST(FlagTable, AddFlagTakesNameHelpGroupAndDefaultFromTheTable) {
  CLI::App app{"t", "evaluate"};
  int workers = defaults::kNumWorkers;
  std::optional<std::string> caption;
  CLI::Option* w = add_flag(app, flags::kNumWorkers, workers);
  CLI::Option* c = add_flag(app, flags::kCaptionColumn, caption);
  EXPECT_EQ(w->get_name(), "--dataloader_num_workers");
  EXPECT_EQ(w->get_description(), flags::kNumWorkers.help);
  EXPECT_EQ(w->get_group(), flags::kNumWorkers.group);
  EXPECT_EQ(w->get_default_str(), flags::kNumWorkers.default_text);
  EXPECT_EQ(c->get_default_str(), "");  // unset optional: the help says what the format's own default is
  app.parse(std::vector<std::string>{"7", "--dataloader_num_workers"});
  EXPECT_EQ(workers, 7);
  EXPECT_FALSE(caption.has_value());
}

TEST(FlagTable, AliasesAndEnvironmentVariable) {
  const FlagDef def{"--tokenizer_name", "", "help", group::kModelData, {"t"}, "BT_TEST_FLAG_TABLE_TOKENIZER"};
  std::string dir;
  CLI::App app{"t", "tokenize"};
  add_flag(app, def, dir, ",--tokenizer_dir");
  app.parse(std::vector<std::string>{"a", "--tokenizer_dir"});
  EXPECT_EQ(dir, "a");
  CLI::App env_app{"t", "tokenize"};
  dir.clear();
  add_flag(env_app, def, dir);
  ::setenv("BT_TEST_FLAG_TABLE_TOKENIZER", "from_env", 1);
  env_app.parse(std::vector<std::string>{});
  ::unsetenv("BT_TEST_FLAG_TABLE_TOKENIZER");
  EXPECT_EQ(dir, "from_env");
}

// --cache_dir takes $HF_HUB_CACHE when not given (flag > environment > default), says so in --help, and a value
// from the environment is not one the command line gave.
TEST(FlagTable, CacheDirTakesHfHubCacheUnlessGiven) {
  ASSERT_EQ(flags::kCacheDir.env, "HF_HUB_CACHE");
  const char* saved = std::getenv("HF_HUB_CACHE");
  const std::string restore = saved ? saved : "";
  auto parse = [](std::vector<std::string> args, std::string* dir, bool* from_env) {
    CLI::App app{"t", "info"};
    CLI::Option* o = add_flag(app, flags::kCacheDir, *dir);
    std::reverse(args.begin(), args.end());
    app.parse(args);
    *from_env = from_environment(*o);
    return app.help();
  };
  std::string dir;
  bool env = false;
  {
    ScopedEnv e("HF_HUB_CACHE", "/env/hub");
    const std::string help = parse({}, &dir, &env);
    EXPECT_EQ(dir, "/env/hub");
    EXPECT_TRUE(env);
    EXPECT_NE(help.find("HF_HUB_CACHE"), std::string::npos) << help;
    dir.clear();
    parse({"--cache_dir", "/flag/hub"}, &dir, &env);
    EXPECT_EQ(dir, "/flag/hub");
    EXPECT_FALSE(env);
  }
  dir.clear();
  parse({}, &dir, &env);
  EXPECT_EQ(dir, "");  // unset: hub::cache_root's order ($HF_HOME/hub, ...)
  EXPECT_FALSE(env);
  if (saved) ::setenv("HF_HUB_CACHE", restore.c_str(), 1);
}

TEST(FlagTable, EveryEntryIsWellFormedAndNamedOnce) {
  const std::set<std::string> groups = {group::kOwn,     group::kEssentials, group::kModelData, group::kOptimisation,
                                        group::kFineTuning, group::kRuntime,  group::kCheckpoints, group::kSelection};
  std::set<std::string> names;
  for (const FlagDef* d : flag_table()) {
    EXPECT_EQ(d->names.rfind("--", 0), 0u) << d->names;
    EXPECT_TRUE(names.insert(flag_name(*d)).second) << "twice in the table: " << d->names;
    EXPECT_FALSE(d->help.empty()) << d->names;
    EXPECT_GE(d->commands.size(), 2u) << d->names << ": a flag of one command stays in its file";
    EXPECT_TRUE(groups.count(d->group)) << d->names << ": group " << d->group;
    std::set<std::string> varied;
    for (const CommandVariant& v : d->variants) {
      EXPECT_NE(std::find(d->commands.begin(), d->commands.end(), v.command), d->commands.end())
          << d->names << ": variant for " << v.command << ", which does not take it";
      EXPECT_TRUE(varied.insert(v.command).second) << d->names << ": two variants for " << v.command;
      EXPECT_TRUE(v.default_text || !v.help.empty()) << d->names << ": an empty variant for " << v.command;
    }
  }
  const std::string md = flag_table_text(false), json = flag_table_text(true);
  for (const FlagDef* d : flag_table()) {
    EXPECT_NE(md.find("`" + d->names + "`"), std::string::npos) << d->names;
    EXPECT_NE(json.find("\"" + d->names + "\""), std::string::npos) << d->names;
  }
}

TEST(FlagTable, HelpListsTheEssentialsFirstAndHfAndGaudiOnlyLast) {
  CLI::App app{"t", "t"};
  app.formatter(grouped_formatter());
  bool b = false;
  app.add_flag("--use_habana", b, "x")->group(group::kGaudi);
  app.add_flag("--push_to_hub", b, "x")->group(group::kHfCompat);
  app.add_flag("--fp16", b, "x")->group(group::kHfRecipe);
  app.add_flag("--own", b, "a command's own flag");
  int workers = 0;
  add_flag(app, flags::kNumWorkers, workers);
  app.add_flag("--learning_rate", b, "x")->group(group::kEssentials);
  const std::string help = app.help();
  std::vector<size_t> at;
  for (const std::string g : {"Options", group::kEssentials, group::kRuntime, group::kHfRecipe, group::kGaudi,
                              group::kHfCompat}) {
    at.push_back(help.find("\n" + g + ":\n"));
    ASSERT_NE(at.back(), std::string::npos) << g << "\n" << help;
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << help;
}

}  // namespace
}  // namespace bt::cli
