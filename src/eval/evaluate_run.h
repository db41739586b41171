// `bridgetune evaluate` as a library call: load a contrastive checkpoint and score it on the contest's matching
// task or on image<->text retrieval (eval/torch/embed_eval.h does the scoring). Torch-free header, so the CLI
// file compiles fast.
//
// Contract:
//  - matching: `data` is a matching JSONL file (image, caption_choices, label; see data/matching_parse.h).
//    retrieval: `data` is a captions file/folder or tar shards (image-caption pairs).
//    auto (the default): matching when the data has the matching shape (eval/torch/matching_source.h), else
//    retrieval; one line says which.
//  - Writes output_dir/eval_results.json (HF key names, eval_ prefix) and predictions.jsonl, one line per scored
//    row: matching: file line, image, label, prediction, per-choice scores; retrieval: row, image, caption, the
//    rank of its image and the best-scoring images. Both atomically.
//  - Every check that can fail on user input runs before anything is written.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/defaults.h"
#include "media/transform.h"
#include "source/source.h"

namespace bt::eval {

// --per_device_eval_batch_size's default, decided here for `train`, `evaluate` and `encode` (HF's is 8; 16 keeps a
// CPU's cores busy without holding many images).
inline constexpr int kDefaultEvalBatchSize = defaults::kEvalBatchSize;

// --task: the contest's matching questions, or image<->text retrieval over image-caption pairs; auto: by the data.
enum class EvalTask { kAuto, kMatching, kRetrieval };

struct EvaluateOptions {
  std::string model_name_or_path;
  std::string tokenizer_name;   // a tokenizer folder instead of the model's own ("": the model folder's)
  std::string data;             // --validation_file
  EvalTask task = EvalTask::kAuto;
  std::string output_dir;
  source::ReadOptions read;  // --image_column, --caption_column (retrieval), --on_bad_sample, --max_line_bytes
  std::string choices_column = "caption_choices", label_column = "label";
  int per_device_eval_batch_size = kDefaultEvalBatchSize;
  int dataloader_num_workers = defaults::kNumWorkers;
  int64_t max_eval_samples = 0;  // > 0: only the first N rows (0 or negative: all; the same as train's)
  std::optional<int> max_seq_length;  // unset: defaults::kMaxSeqLength capped to the model's text positions
  uint64_t max_image_pixels = media::kDefaultMaxImagePixels;  // --max_image_pixels
  std::string device = defaults::kDevice;
  bool bf16 = false;
  bool quiet = false;
  uint64_t max_model_bytes = 0;  // 0: the machine's free memory (model/memory_budget.h)
};

// Metric name -> value, as written to eval_results.json.
using EvalMetrics = std::map<std::string, double>;

EvalMetrics run_evaluate(const EvaluateOptions& options);

}  // namespace bt::eval
