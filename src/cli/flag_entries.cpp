// The flag table's entries (contract in cli/flag_table.h): one per flag, with each command's own default or help as
// a variant of that entry. The order of flag_table() is the order `bridgetune flags` prints.
#include "cli/flag_table.h"
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
const Commands kTrainAndBench = {"train", "bench"};
const std::optional<std::string> kSame;  // a variant that keeps the entry's default

}  // namespace

namespace flags {

// Model.
const FlagDef kModelNameOrPath{
    "--model_name_or_path", "",
    "Checkpoint folder (config.json, model.safetensors or pytorch_model.bin, tokenizer files; e.g. a train "
    "--output_dir) or hub id (org/name) in the local HF cache",
    group::kEssentials, {"train", "evaluate", "encode", "forward", "info", "search", "preprocess", "bench"}, "",
    {{"search", kSame, "The model (default: the index's)"},
     {"bench", kSame,
      "Checkpoint folder or hub id (org/name) in the local HF cache to measure instead of --model_preset (your own "
      "setup: with --data, --tokenizer_name, --on_bad_sample)"},
     {"preprocess", kSame,
      "Model folder or hub id (org/name) in the local HF cache: its vision image_size and its "
      "preprocessor_config.json mean/std"}}};
const FlagDef kModelRevision{"--model_revision", defaults::kHubRevision,
                             "Hub ids: branch, tag or commit of the local HF cache copy", group::kModelData,
                             {"train", "evaluate", "encode", "bench", "tokenize", "forward", "info", "preprocess"}};
// The environment variable is huggingface_hub's first choice; the rest of its order (HF_HOME/hub, ...) is
// hub::cache_root's, for an empty --cache_dir.
const FlagDef kCacheDir{"--cache_dir", "",
                        "Hub ids: the HF hub cache (default $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub)",
                        group::kModelData,
                        {"train", "evaluate", "encode", "bench", "tokenize", "forward", "info", "preprocess"},
                        "HF_HUB_CACHE"};
const FlagDef kMaxModelBytes{
    "--max_model_bytes", "0",
    "Refuse a model whose weights (+ gradients and AdamW state when training) and activations would take more "
    "bytes (0: the machine's free memory)",
    group::kRuntime, {"train", "evaluate", "encode", "search", "forward"}};
const FlagDef kModelPreset{"--model_preset", defaults::kModelPreset,
                           "Random-init shapes when no checkpoint is given: tiny|small|base|large", group::kModelData,
                           {"train", "bench", "info"}, "",
                           {{"info", "", "A preset's shapes instead of a checkpoint's: tiny|small|base|large"}}};
const FlagDef kTokenizerName{
    "--tokenizer_name", "",
    "Tokenizer folder or hub id (org/name) in the local HF cache: tokenizer.json, or vocab.json + merges.txt. With "
    "--model_name_or_path: instead of the checkpoint's own (one without tokenizer files needs it); with "
    "--model_preset: its vocabulary sizes the text embeddings (default: a BPE of --tokenizer_vocab_size trained "
    "on the captions)",
    group::kModelData, {"train", "evaluate", "encode", "bench", "tokenize"}, "",
    {{"evaluate", kSame,
      "Tokenizer folder or hub id (org/name) in the local HF cache (tokenizer.json, or vocab.json + merges.txt) "
      "instead of the model folder's own: for a checkpoint without tokenizer files"},
     {"encode", kSame,
      "Tokenizer folder or hub id (org/name) in the local HF cache (tokenizer.json, or vocab.json + merges.txt) "
      "instead of the model folder's own: for a checkpoint without tokenizer files (index.json records it for "
      "search)"},
     {"tokenize", kSame,
      "The tokenizer: a folder or hub id (org/name) in the local HF cache with tokenizer.json, or vocab.json + "
      "merges.txt"}}};
const FlagDef kTokenizerVocabSize{
    "--tokenizer_vocab_size", text(defaults::kBpeVocabSize),
    "Ids of the BPE trained on the training captions when neither --model_name_or_path nor --tokenizer_name brings "
    "a tokenizer (the preset's text embeddings take its size; at most: fewer when the captions run out of pairs)",
    group::kModelData, {"train", "bench"}};

// Data.
const FlagDef kData{"--data", "", "The dataset: a captions file or folder, HF parquet or tar shards",
                    group::kEssentials, {"bench", "bench-loader", "encode"}, "",
                    {{"bench", kSame, "Dataset (captions file or folder); none: generated cartoons in --output_dir/data"},
                     {"bench-loader", kSame,
                      "a folder with captions.jsonl, a JSONL/CSV captions file, tar shards (brace patterns) or "
                      "parquet files"},
                     {"encode", kSame,
                      "What to embed: a captions file or folder, HF parquet (file, folder, glob) or tar shards (also "
                      "http(s):// URLs and pipe:COMMAND), as train reads them"}}};
const FlagDef kValidationFile{
    "--validation_file", "", "Validation split (same forms) for eval loss and recall@K", group::kEssentials,
    {"train", "evaluate"}, "",
    {{"evaluate", kSame,
      "matching: JSONL with image, caption_choices, label (A-E or 0-based), or HF parquet; retrieval: captions "
      "file/folder, tar shards (also http(s):// URLs, pipe:COMMAND) or parquet. Image paths are relative to the "
      "file's folder"}}};
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
                           group::kModelData, {"train", "evaluate", "encode", "bench", "bench-loader"}};
const FlagDef kMaxLineBytes{"--max_line_bytes", text(data::kDefaultMaxLineBytes),
                            "Refuse a longer JSONL line or CSV record (a caption file's rows take a few KB)",
                            group::kModelData, kReaders};
const FlagDef kMaxImageBytes{"--max_image_bytes", text(data::kDefaultMaxImageBytes),
                             "Refuse larger image files and tar members before reading them", group::kModelData,
                             {"train", "bench-loader"}};
const FlagDef kShuffleWindowRowGroups{
    "--shuffle_window_row_groups", "-1",
    "parquet: shuffle row groups, then rows within windows of K groups so each decoded page serves all its rows "
    "(-1: 8, capped to the page cache; 0: fully random rows)",
    group::kModelData, {"train", "bench-loader"}};

// Output and steps.
const FlagDef kOutputDir{"--output_dir", "", "Where the command's results go", group::kEssentials,
                         {"train", "bench", "evaluate", "encode"}, "",
                         {{"train", "runs/train", "Where checkpoints, the final model and the result files go"},
                          {"bench", "runs/bench", "Where runs, bench_results.json and bench.png go"},
                          {"evaluate", kSame, "Where eval_results.json (and predictions.jsonl) go"},
                          {"encode", kSame,
                           "The index folder: image_embeds.npy, images.jsonl, text_embeds.npy, texts.jsonl, "
                           "index.json"}}};
const FlagDef kMaxSteps{"--max_steps", "-1", "Optimizer steps (overrides --num_train_epochs when > 0)",
                        group::kEssentials, kTrainAndBench, "", {{"bench", "30", "Steps per configuration"}}};
const FlagDef kThroughputWarmupSteps{"--throughput_warmup_steps", "3", "Steps left out of train_samples_per_second",
                                     group::kRuntime, kTrainAndBench, "",
                                     {{"bench", "5", "Steps per configuration left out of the timing"}}};

// Batches, loader, runtime.
const FlagDef kPerDeviceTrainBatchSize{"--per_device_train_batch_size", text(defaults::kTrainBatchSize),
                                       "Training batch per process (images)", group::kEssentials, kTrainAndBench};
const FlagDef kPerDeviceEvalBatchSize{"--per_device_eval_batch_size", text(defaults::kEvalBatchSize),
                                      "Evaluation batch per process (images per forward)", group::kRuntime,
                                      kReaders};
const FlagDef kNumWorkers{"--dataloader_num_workers", text(defaults::kNumWorkers),
                          "Loader threads decoding images (0: load in the step loop)", group::kRuntime, kReaders};
const FlagDef kMaxSeqLength{"--max_seq_length", text(defaults::kMaxSeqLength),
                            "Caption truncation in tokens, </s> kept (unset: 128, or what the model's text positions "
                            "hold when fewer; more than they hold is refused)",
                            group::kRuntime, {"train", "evaluate", "encode", "tokenize"}, "",
                            {{"tokenize", kSame, "Caption truncation in tokens, </s> kept (0: none)"}}};
const FlagDef kImageSize{"--image_size", "0", "Square crop size in pixels (0: the model's vision image_size)",
                         group::kRuntime, {"train", "bench", "bench-loader", "preprocess"}, "",
                         {{"bench-loader", text(defaults::kLoaderImageSize),
                           "square crop size in pixels (288 base, 294 large)"},
                          {"preprocess", text(defaults::kLoaderImageSize),
                           "Output side in px (288 bridgetower-base, 294 large; default: the model's, else 288)"}}};
const FlagDef kSeed{"--seed", text(defaults::kSeed),
                    "Seed of the data order and the crops (train: also the initialisation and dropout)",
                    group::kOptimisation, {"train", "bench-loader", "synth"}, "",
                    {{"synth", "0", "Random seed; same arguments give identical bytes"}}};
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
                              group::kRuntime, {"train", "bench", "bench-loader"}, "",
                              {{"bench", "0", "0: decode every image every time (real JPEG loading)"}}};
const FlagDef kDedupeImagesInBatch{
    "--dedupe_images_in_batch", "1",
    "Reorder each epoch so a batch never holds one image twice where avoidable: true|false (on|off)",
    group::kRuntime, {"train", "bench-loader"}, "", {{"bench-loader", "on"}}};
const FlagDef kJpegDctScaling{
    "--jpeg_dct_scaling", "1",
    "Decode JPEGs at a reduced DCT scale when the result stays >= the crop: true|false (on|off); false is "
    "bit-exact with Pillow",
    group::kRuntime, {"train", "bench", "bench-loader", "preprocess"}, "",
    {{"bench", kSame,
      "false: decode JPEGs at full resolution, as PIL does (a like-for-like comparison with a Python loader)"},
     {"bench-loader", "on"},
     {"preprocess", "true"}}};
const FlagDef kUseMediaPipeline{"--use_media_pipeline", "", "Decode/resize on the GPU (CUDA builds, --device cuda)",
                                group::kRuntime, kTrainAndBench, "",
                                {{"bench", kSame, "Also measure the GPU media pipeline (GPU only)"}}};
const FlagDef kMediaDecode{"--media_decode", "auto",
                           "With --use_media_pipeline: auto (nvJPEG's hardware decoder when present) | gpu (nvJPEG; "
                           "progressive/CMYK/gray JPEGs and PNGs still decode on the CPU) | cpu",
                           group::kRuntime, kTrainAndBench};
const FlagDef kMaxImagePixels{"--max_image_pixels", text(media::kDefaultMaxImagePixels),
                              "Refuse larger images from their header, as decompression bombs (Pillow's "
                              "MAX_IMAGE_PIXELS; --on_bad_sample skip leaves them out instead)",
                              group::kModelData,
                              {"train", "evaluate", "encode", "bench", "bench-loader", "preprocess"}};

// The step-performance flags of issue 46 (cli/perf_flags.h registers them).
const FlagDef kAttentionBackend{"--attention_backend", "auto",
                                "auto|flash|efficient|cudnn|math|eager: attention's kernel (auto: the fastest that "
                                "takes each tower's inputs; one these inputs rule out falls back, said in the run's "
                                "op_paths)",
                                group::kRuntime, kTrainAndBench};
const FlagDef kLoaderWorkerNice{"--loader_worker_nice", "-1",
                                "Nice value added to the decode workers' threads (-1: 5 when training on CUDA, 0 on "
                                "the CPU)",
                                group::kRuntime, kTrainAndBench};
const FlagDef kLoaderWorkerAffinity{"--loader_worker_affinity", "",
                                    "Keep the decode workers off the first CPU (for the thread launching the GPU's "
                                    "work)",
                                    group::kRuntime, kTrainAndBench};
const FlagDef kProfileSteps{"--profile_steps", "",
                            "A:B: torch's profiler around steps A to B, a chrome trace in "
                            "output_dir/profile_steps_A-B.json",
                            group::kRuntime, kTrainAndBench};

// A command's own use of a shared name (listed first in its --help, with -h).
const FlagDef kWorkers{"--workers", "0,1,2", "Loader worker counts to compare, comma-separated (e.g. 0,1,2)",
                       group::kOwn, {"bench", "bench-loader"}, "", {{"bench-loader", "[0,1,2]"}}};
const FlagDef kRepeats{"--repeats", "3", "Interleaved repetitions per configuration (median reported)", group::kOwn,
                       {"bench", "bench-loader"}, "",
                       {{"bench", kSame, "Interleaved repetitions per configuration (median reported; a verdict "
                                         "needs repeats whose runs differ beyond their spread)"}}};
const FlagDef kTransform{"--transform", "eval", "eval (resize + center crop) or train (RandomResizedCrop + flip)",
                         group::kOwn, {"bench-loader", "preprocess"}};
const FlagDef kBatch{"--batch", "", "The batch", group::kOwn, {"bench-loader", "forward"}, "",
                     {{"bench-loader", "32", "batch size"},
                      {"forward", kSame,
                       "Input safetensors: pixel_values F32 [B,3,S,S], input_ids and attention_mask I64 [B,L]"}}};
const FlagDef kThreads{"--threads", "0", "Threads (0 = all cores)", group::kOwn, {"forward", "synth"}, "",
                       {{"forward", kSame, "Torch intra-op threads (0 = all cores)"},
                        {"synth", kSame, "Worker threads (0 = all cores)"}}};
const FlagDef kOut{"--out", "", "The output", group::kOwn, {"synth", "forward", "preprocess"}, "",
                   {{"synth", kSame, "Output folder"},
                    {"forward", kSame, "Output safetensors"},
                    {"preprocess", kSame, "Output .npy file"}}};
const FlagDef kJson{"--json", "", "JSON output", group::kOwn, {"search", "bench-loader", "flags"}, "",
                    {{"search", kSame, "One {\"rank\", \"image\"|\"text\", \"score\"} JSON object per line"},
                     {"bench-loader", kSame, "one JSON object per line per worker count"},
                     {"flags", kSame, "One JSON array of {names, default, help, group, commands, env, variants}"}}};

}  // namespace flags

const std::vector<const FlagDef*>& flag_table() {
  using namespace flags;
  static const std::vector<const FlagDef*> table = {
      &kModelNameOrPath, &kData, &kValidationFile, &kDatasetName, &kOutputDir, &kPerDeviceTrainBatchSize, &kMaxSteps,
      &kModelRevision, &kCacheDir, &kModelPreset, &kTokenizerName, &kTokenizerVocabSize, &kDatasetConfigName,
      &kDatasetRevision, &kSplit, &kMaxEvalSamples, &kImageColumn, &kCaptionColumn, &kOnBadSample, &kMaxLineBytes,
      &kMaxImageBytes, &kShuffleWindowRowGroups, &kMaxImagePixels, &kSeed, &kPerDeviceEvalBatchSize, &kNumWorkers,
      &kMaxSeqLength, &kImageSize, &kDevice, &kBf16, &kTorchThreads, &kMaxModelBytes, &kPrefetchBatches,
      &kDecodedCacheMb, &kDedupeImagesInBatch, &kJpegDctScaling, &kUseMediaPipeline, &kMediaDecode,
      &kThroughputWarmupSteps, &kAttentionBackend, &kLoaderWorkerNice, &kLoaderWorkerAffinity, &kProfileSteps,
      &kWorkers, &kRepeats, &kTransform, &kBatch, &kThreads, &kOut, &kJson};
  return table;
}

}  // namespace bt::cli
