// The C++ half of bridgetune.DataLoader: opens `data` through bt::source (any source the CLI accepts), runs
// bt::loader::Loader over it and tokenizes each batch's captions. Python-free, so the GIL can be released around
// every call; the binding (module.cpp) turns a Held batch into DLPack tensors.
//
// Contract:
//  - Batches are those of the C++ loader for the same options, byte for byte. drop_last=true drops both the
//    sharding padding (DistributedSampler's drop_last) and the short last batch (DataLoader's drop_last); the
//    default is false, torch's (the trainer's own loader options are separate and unaffected).
//  - start(epoch, position) begins `epoch` at `position` samples into this rank's order; position must be a
//    multiple of batch_size or the end of the epoch (after a short last batch; it is what state_dict records), so
//    a resumed run sees exactly the remaining batches.
//  - next() returns nullptr at the end of the epoch; a bad sample throws bt::Error naming the file (policy error).
//  - A Held keeps its Loader alive, so tensors may outlive the Python DataLoader object.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/defaults.h"
#include "loader/loader.h"
#include "source/source.h"
#include "text/tokenizer.h"

namespace bt::py {

struct CoreOptions {
  std::string data;
  // Several datasets (a list given as data): mixed as the CLI's --train_file A --train_file B (source/mixed_source.h),
  // with these probabilities (empty: round-robin) and stopping rule ("first_exhausted" | "all_exhausted").
  std::vector<std::string> mix_data;
  std::vector<double> mix_weights;
  std::string mix_stopping = "first_exhausted";
  int batch_size = 32;
  int num_workers = defaults::kNumWorkers;
  bool shuffle = true;
  uint64_t seed = 0;
  bool drop_last = false;
  int image_size = defaults::kLoaderImageSize;
  std::array<float, 3> mean{media::kClipMean[0], media::kClipMean[1], media::kClipMean[2]};
  std::array<float, 3> std{media::kClipStd[0], media::kClipStd[1], media::kClipStd[2]};
  std::string tokenizer_dir;  // empty: captions are returned as text
  int max_seq_length = defaults::kMaxSeqLength;
  std::string padding = "longest";  // or "max_length"
  std::string image_column = defaults::kImageColumn;
  std::optional<std::string> caption_column;  // unset (None): the format's own, as the CLI (source/source.h)
  std::string transform = "eval";         // a preset of media/augment.h: eval, train, finetune or strong
  std::string on_bad_sample = defaults::kOnBadSample;  // or "skip"
  int jpeg_dct_scaling = -1;              // -1 auto: off for eval (bit-exact with Pillow), on for train
  uint64_t max_image_pixels = media::kDefaultMaxImagePixels;  // --max_image_pixels (decompression bombs)
  int rank = 0, world_size = 1;
  int prefetch_batches = defaults::kPrefetchBatches;
  size_t decoded_cache_mb = defaults::kDecodedCacheMb;
  bool dedupe_images_in_batch = loader::kDedupeImagesInBatchByDefault;
};

struct Held {
  std::shared_ptr<loader::Loader> loader;  // declared first: destroyed after the batch it lent
  loader::BatchPtr batch;
  std::optional<text::BatchEncoding> tokens;
};

class LoaderCore {
 public:
  explicit LoaderCore(CoreOptions o);
  size_t batches_per_epoch() const;
  size_t rows_per_epoch() const { return loader_->sampler().rows_per_epoch(); }
  size_t dataset_size() const { return src_.dataset->size(); }
  const CoreOptions& options() const { return opt_; }
  void start(uint64_t epoch, size_t position);
  std::shared_ptr<Held> next();
  loader::LoaderStats stats() const { return loader_->stats(); }

 private:
  CoreOptions opt_;
  source::Source src_;
  std::optional<text::Tokenizer> tok_;
  std::shared_ptr<loader::Loader> loader_;
  bool started_ = false;
};

// The loader's transform settings for these options (shared with bridgetune.preprocess).
media::TransformSpec transform_spec(int image_size, const std::string& transform, int jpeg_dct_scaling,
                                    uint64_t max_image_pixels);

}  // namespace bt::py
