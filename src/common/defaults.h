// The defaults that more than one command, options struct or the Python module share, decided here once: the
// options structs initialise their members from these, the CLI's flag table (cli/flag_table.h) shows them in
// --help, and the Python module exports them (bridgetune._native.DEFAULTS, used by loader.py's signature). A
// value that belongs to one module alone stays in that module's header.
#pragma once
#include <cstdint>

namespace bt::defaults {

// --dataloader_num_workers: loader threads (C++ threads, not processes; 0: load in the consuming thread).
inline constexpr int kNumWorkers = 2;
// --max_seq_length: caption truncation in tokens (the HF example's default).
inline constexpr int kMaxSeqLength = 128;
// --tokenizer_vocab_size (train, bench): the ids of the BPE trained on the captions when no tokenizer is given.
inline constexpr int kBpeVocabSize = 1024;
// --seed: initialisation, data order, crops, dropout (HF's TrainingArguments default).
inline constexpr uint64_t kSeed = 42;
// --per_device_train_batch_size / --per_device_eval_batch_size (HF's is 8; 16 keeps a CPU's cores busy without
// holding many images).
inline constexpr int kTrainBatchSize = 16;
inline constexpr int kEvalBatchSize = 16;
// --image_column of captions files and parquet. The caption column's default depends on the format and is decided
// in source/source.cpp (default_caption_column), for the CLI and Python alike.
inline constexpr const char* kImageColumn = "image";
// --device.
inline constexpr const char* kDevice = "cpu";
// --model_preset: the random-init shapes when no checkpoint is given.
inline constexpr const char* kModelPreset = "tiny";
// --model_revision / --dataset_revision of a hub id in the local HF cache.
inline constexpr const char* kHubRevision = "main";
// --split of a hub dataset in `evaluate` and `encode`: HF's evaluation split (what `train --do_eval` reads). The
// contest's test split is one `--split test` away.
inline constexpr const char* kEvalSplit = "validation";
// --on_bad_sample: a bad row or image stops the run.
inline constexpr const char* kOnBadSample = "error";
// --prefetch_batches: batches the loader keeps ready ahead of its consumer, in total (not per worker).
inline constexpr int kPrefetchBatches = 4;
// --decoded_cache_mb: the LRU cache of transformed crops of repeated images (never used by random train transforms).
inline constexpr int kDecodedCacheMb = 512;
// The square crop of a loader with no model to ask (bench-loader, the Python DataLoader): the base model's 288.
inline constexpr int kLoaderImageSize = 288;

}  // namespace bt::defaults
