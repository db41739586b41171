// The embedding index: `bridgetune encode` writes it, `bridgetune search` reads it. Torch-free header (the work is
// in torch/encode_run.cpp and torch/search_run.cpp) so the CLI compiles fast.
//
// An index folder E holds:
//   image_embeds.npy   float32 [N, D]: every distinct image of the data, L2-normalised contrastive embeddings
//                      (exactly the vectors the model's logits use; a dot product is the cosine)
//   images.jsonl       N lines {"image": key, "row": dataset row}, in the order of image_embeds.npy
//   text_embeds.npy    float32 [T, D] and texts.jsonl ({"text": caption}) when the data has captions
//   index.json         model (folder), data, columns, dims, counts, transform, seconds
// Search is exact (one matrix product): fine up to a few million rows per GB of embeddings in RAM.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "common/defaults.h"
#include "media/transform.h"
#include "source/source.h"
#include "eval/evaluate_run.h"

namespace bt::index {

struct EncodeOptions {
  std::string model_name_or_path;  // a folder (hub ids are resolved by the CLI)
  std::string tokenizer_name;      // a tokenizer folder instead of the model's own ("": the model folder's)
  std::string data;                // anything train reads: captions file/folder, parquet, tar shards
  std::string output_dir;
  source::ReadOptions read;  // --image_column, --caption_column, --on_bad_sample, --max_line_bytes
  int per_device_eval_batch_size = eval::kDefaultEvalBatchSize;
  int dataloader_num_workers = defaults::kNumWorkers;
  int torch_threads = 0;           // 0: model::torch_threads_for
  std::optional<int> max_seq_length;  // unset: defaults::kMaxSeqLength capped to the model's text positions
  uint64_t max_image_pixels = media::kDefaultMaxImagePixels;  // --max_image_pixels
  std::string device = defaults::kDevice;
  bool bf16 = false;
  bool quiet = false;
  uint64_t max_model_bytes = 0;  // 0: the machine's free memory (model/memory_budget.h)
};

struct EncodeSummary {
  int64_t images = 0, texts = 0, skipped = 0, dim = 0;
  double seconds = 0, images_per_second = 0;
};

EncodeSummary run_encode(const EncodeOptions& options);

struct SearchOptions {
  std::string index;               // an encode output folder
  std::string query, query_image;  // exactly one: a text (ranks images) or an image file (ranks texts)
  int top_k = 5;
  bool json = false;               // one {"rank", "image"|"text", "score"} per line instead of a table
  std::string model_name_or_path;  // "" : the index's model
  std::string contact_sheet;       // a PNG of the top images with their scores (text queries)
  std::string device = defaults::kDevice;
  bool bf16 = false;
  uint64_t max_model_bytes = 0;  // 0: the machine's free memory (model/memory_budget.h)
};

// Prints the ranking (stdout) and writes the contact sheet; returns the number of results.
int run_search(const SearchOptions& options);

}  // namespace bt::index
