#include "cli/flag_table.h"

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/defaults.h"
#include "data/captions_parse.h"
#include "data/jsonl.h"
#include "media/transform.h"
#include "source/source.h"

namespace bt::cli {

namespace {

template <typename T>
std::string text(T v) {
  return CLI::detail::to_string(v);  // CLI11's own formatting, as capture_default_str shows the value
}

using Commands = std::vector<std::string>;
// The commands that read a dataset (train-style flags for columns and bad samples), and that load a model.
const Commands kReaders = {"train", "evaluate", "encode"};
const Commands kModelUsers = {"train", "evaluate", "encode", "search", "bench"};

// The groups in --help's order (flag_table.h).
const std::vector<std::string> kGroupOrder = {group::kEssentials, group::kModelData, group::kOptimisation,
                                              group::kFineTuning, group::kRuntime,   group::kCheckpoints,
                                              group::kSelection,  group::kHfRecipe,  group::kGaudi,
                                              group::kHfCompat};

int group_rank(const std::string& g) {
  const auto it = std::find(kGroupOrder.begin(), kGroupOrder.end(), g);
  return it == kGroupOrder.end() ? -1 : static_cast<int>(it - kGroupOrder.begin());
}

// CLI11 2.1's Formatter::make_help with the groups ordered by group_rank (its make_groups is not virtual).
class GroupedFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return CLI::Formatter::make_help(app, name, mode);
    std::stringstream out;
    if (app->get_name().empty() && app->get_parent() != nullptr && app->get_group() != "Subcommands")
      out << app->get_group() << ':';
    out << make_description(app) << make_usage(app, name) << make_positionals(app) << ordered_groups(app)
        << make_subcommands(app, mode) << '\n'
        << make_footer(app);
    return out.str();
  }

 private:
  std::string ordered_groups(const CLI::App* app) const {
    std::vector<std::string> groups = app->get_groups();
    std::stable_sort(groups.begin(), groups.end(),
                     [](const std::string& a, const std::string& b) { return group_rank(a) < group_rank(b); });
    std::string out;
    for (const std::string& g : groups) {
      if (g.empty()) continue;  // hidden
      const auto opts = app->get_options([&g](const CLI::Option* o) { return o->get_group() == g && o->nonpositional(); });
      if (!opts.empty()) out += (out.empty() ? "" : "\n") + make_group(g, false, opts);
    }
    return out;
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> grouped_formatter() { return std::make_shared<GroupedFormatter>(); }

namespace flags {

// Model.
const FlagDef kModelNameOrPath{
    "--model_name_or_path", "",
    "Checkpoint folder (config.json, model.safetensors or pytorch_model.bin, tokenizer files; e.g. a train "
    "--output_dir) or hub id (org/name) in the local HF cache",
    group::kEssentials, {"train", "evaluate", "encode", "forward", "info"}};
const FlagDef kModelRevision{"--model_revision", defaults::kHubRevision,
                             "Hub ids: branch, tag or commit of the local HF cache copy", group::kModelData,
                             {"train", "evaluate", "encode", "bench", "tokenize", "forward", "info", "preprocess"}};
const FlagDef kCacheDir{"--cache_dir", "",
                        "Hub ids: the HF hub cache (default $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub)",
                        group::kModelData,
                        {"train", "evaluate", "encode", "bench", "tokenize", "forward", "info", "preprocess"}};
const FlagDef kMaxModelBytes{
    "--max_model_bytes", "0",
    "Refuse a model whose weights (+ gradients and AdamW state when training) and activations would take more "
    "bytes (0: the machine's free memory)",
    group::kRuntime, {"train", "evaluate", "encode", "search", "forward"}};
const FlagDef kModelPreset{"--model_preset", defaults::kModelPreset,
                           "Random-init shapes when no checkpoint is given: tiny|small|base|large", group::kModelData,
                           {"train", "bench"}};
const FlagDef kTokenizerName{
    "--tokenizer_name", "",
    "Tokenizer folder or hub id (org/name) in the local HF cache: tokenizer.json, or vocab.json + merges.txt. "
    "train/bench with --model_preset: its vocabulary sizes the text embeddings (default: a small BPE trained on "
    "the captions)",
    group::kModelData, {"train", "bench", "tokenize"}};

// Data.
const FlagDef kDatasetName{"--dataset_name", "",
                           "HF dataset: hub id in the local HF cache (e.g. jmhessel/newyorker_caption_contest) or a "
                           "folder of the same layout (train: its train/validation/test splits feed "
                           "--do_train/--do_eval/--do_predict)",
                           group::kEssentials, kReaders};
const FlagDef kDatasetConfigName{"--dataset_config_name", "", "Its config (e.g. matching)", group::kModelData,
                                 kReaders};
const FlagDef kDatasetRevision{"--dataset_revision", defaults::kHubRevision, "Hub datasets: branch, tag or commit",
                               group::kModelData, kReaders};
const FlagDef kSplit{"--split", defaults::kEvalSplit, "The dataset's split: train, validation or test", group::kModelData,
                     {"evaluate", "encode"}};
const FlagDef kMaxEvalSamples{"--max_eval_samples", "0", "Only the first N validation rows (0: all)",
                              group::kModelData, {"train", "evaluate"}};
const FlagDef kImageColumn{"--image_column", defaults::kImageColumn,
                           "Image column of a CSV/JSONL/parquet dataset (paths relative to the file's folder)",
                           group::kModelData, {"train", "evaluate", "encode", "bench-loader"}};
const FlagDef kCaptionColumn{"--caption_column", "", source::kCaptionColumnHelp, group::kModelData,
                             {"train", "evaluate", "encode", "bench-loader"}};
const FlagDef kOnBadSample{"--on_bad_sample", defaults::kOnBadSample,
                           "A corrupt or unreadable row or image stops the run (error) or is left out and counted "
                           "(skip): error|skip",
                           group::kModelData, {"train", "evaluate", "encode", "bench-loader"}};
const FlagDef kMaxLineBytes{"--max_line_bytes", text(data::kDefaultMaxLineBytes),
                            "Refuse a longer JSONL line or CSV record (a caption file's rows take a few KB)",
                            group::kModelData, kReaders};
const FlagDef kMaxImageBytes{"--max_image_bytes", text(data::kDefaultMaxImageBytes),
                             "Refuse larger image files and tar members before reading them", group::kModelData,
                             {"train", "bench-loader"}};

// Batches, loader, runtime.
const FlagDef kPerDeviceTrainBatchSize{"--per_device_train_batch_size", text(defaults::kTrainBatchSize),
                                       "Training batch per process (images)", group::kEssentials, {"train", "bench"}};
const FlagDef kPerDeviceEvalBatchSize{"--per_device_eval_batch_size", text(defaults::kEvalBatchSize),
                                      "Evaluation batch per process (images per forward)", group::kRuntime,
                                      kReaders};
const FlagDef kNumWorkers{"--dataloader_num_workers", text(defaults::kNumWorkers),
                          "Loader threads decoding images (0: load in the step loop)", group::kRuntime, kReaders};
const FlagDef kMaxSeqLength{"--max_seq_length", text(defaults::kMaxSeqLength),
                            "Caption truncation in tokens, </s> kept (tokenize: 0 for none)", group::kRuntime,
                            {"train", "evaluate", "encode", "tokenize"}};
const FlagDef kImageSize{"--image_size", "0", "Square crop size in pixels (0: the model's vision image_size)",
                         group::kRuntime, {"train", "bench"}};
const FlagDef kSeed{"--seed", text(defaults::kSeed),
                    "Seed of the data order and the crops (train: also the initialisation and dropout)",
                    group::kOptimisation, {"train", "bench-loader"}};
const FlagDef kDevice{"--device", defaults::kDevice, "cpu|cuda", group::kRuntime, kModelUsers};
const FlagDef kBf16{"--bf16", "", "bf16 autocast (CUDA; CPU where libtorch supports it)", group::kRuntime,
                    kModelUsers};
const FlagDef kTorchThreads{"--torch_threads", "0",
                            "Intra-op threads (0: every core for the small preset and up, else the cores the loader "
                            "workers leave, at least 1)",
                            group::kRuntime, {"train", "encode", "bench"}};

const FlagDef kPrefetchBatches{"--prefetch_batches", text(defaults::kPrefetchBatches),
                               "Batches the loader keeps ready ahead of the step, in total (not per worker)",
                               group::kRuntime, {"train", "bench-loader"}};
const FlagDef kDecodedCacheMb{"--decoded_cache_mb", text(defaults::kDecodedCacheMb),
                              "LRU cache of transformed crops of repeated images, MB (0: off; never used for random "
                              "train transforms)",
                              group::kRuntime, {"train", "bench-loader"}};
const FlagDef kMediaDecode{"--media_decode", "auto",
                           "With --use_media_pipeline: auto (nvJPEG's hardware decoder when present) | gpu (nvJPEG; "
                           "progressive/CMYK/gray JPEGs and PNGs still decode on the CPU) | cpu",
                           group::kRuntime, {"train", "bench"}};
const FlagDef kMaxImagePixels{"--max_image_pixels", text(media::kDefaultMaxImagePixels),
                              "Refuse larger images from their header, as decompression bombs (Pillow's "
                              "MAX_IMAGE_PIXELS)",
                              group::kModelData, {"bench-loader", "preprocess"}};

}  // namespace flags

const std::vector<const FlagDef*>& flag_table() {
  using namespace flags;
  static const std::vector<const FlagDef*> table = {
      &kModelNameOrPath, &kDatasetName, &kPerDeviceTrainBatchSize, &kModelRevision, &kCacheDir, &kModelPreset,
      &kTokenizerName, &kDatasetConfigName, &kDatasetRevision, &kSplit, &kMaxEvalSamples, &kImageColumn,
      &kCaptionColumn, &kOnBadSample, &kMaxLineBytes, &kMaxImageBytes, &kSeed, &kPerDeviceEvalBatchSize,
      &kNumWorkers, &kMaxSeqLength, &kImageSize, &kDevice, &kBf16, &kTorchThreads, &kMaxModelBytes,
      &kPrefetchBatches, &kDecodedCacheMb, &kMediaDecode, &kMaxImagePixels};
  return table;
}

std::string flag_name(const FlagDef& def) { return def.names.substr(0, def.names.find(',')); }

CLI::Option* apply_def(CLI::Option* opt, const FlagDef& def) {
  opt->group(def.group);
  if (!def.env.empty()) opt->envname(def.env);
  return opt;
}

CLI::Option* add_switch(CLI::App& app, const FlagDef& def, bool& target) {
  return apply_def(app.add_flag(def.names, target, def.help), def);
}

namespace {
std::string escape_pipes(const std::string& s) {  // "tiny|small" inside a Markdown table cell
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}
}  // namespace

std::string flag_table_text(bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const FlagDef* d : flag_table())
      out.push_back({{"names", d->names}, {"default", d->default_text}, {"help", d->help}, {"group", d->group},
                     {"commands", d->commands}, {"env", d->env}});
    return out.dump(1) + "\n";
  }
  std::string s;
  for (const char* g : {group::kEssentials, group::kModelData, group::kOptimisation, group::kRuntime}) {
    s += std::string("\n### ") + g + "\n\n| flag | default | commands | help |\n|---|---|---|---|\n";
    for (const FlagDef* d : flag_table()) {
      if (d->group != g) continue;
      std::string cmds;
      for (const auto& c : d->commands) cmds += (cmds.empty() ? "" : ", ") + c;
      s += "| `" + d->names + "` | " + (d->default_text.empty() ? "" : "`" + d->default_text + "`") + " | " + cmds +
           " | " + escape_pipes(d->help) + (d->env.empty() ? "" : " (env " + d->env + ")") + " |\n";
    }
  }
  return s;
}

}  // namespace bt::cli
