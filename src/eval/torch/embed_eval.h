// Evaluation of the contrastive model from its embeddings: image<->text retrieval over image-caption pairs and the
// contest's matching task (results and metric names: eval/metrics.h). The one implementation behind
// `bridgetune evaluate`, the trainer's evaluations during training, the recipe's final ones and the demo's scores.
//
// Contract:
//  - Retrieval's gallery is the distinct images (by Dataset::image_key) of the good rows; every caption row whose
//    image has an embedding is one query, once. Without the loss, each distinct image and text is encoded once
//    (encode_image / encode_text: the uni-modal halves of the forward) in batches of batch_size; images go through
//    a loader (decode + eval transform, num_workers threads), normalised with the model's config().image (its
//    preprocessor_config.json's mean/std). With the loss (the trainer and the recipe), the caller's loader feeds
//    the full forward, whose text and image embeddings are the same vectors.
//  - on_bad_sample skip: an image that cannot be read or decoded drops its rows (counted in `skipped`);
//    error: the first such image throws bt::Error naming it.
//  - Embeddings are L2-normalised, so similarities are cosines; the model is in eval mode meanwhile (restored).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/defaults.h"
#include "data/dataset.h"
#include "data/matching_parse.h"
#include "eval/metrics.h"
#include "loader/loader.h"
#include "media/transform.h"
#include "model/bridgetower.h"
#include "text/tokenizer.h"

namespace bt::eval {

struct EmbedOptions {
  int batch_size = defaults::kEvalBatchSize;
  int num_workers = defaults::kNumWorkers;
  int image_size = 0;  // the model's vision image_size
  int max_seq_length = defaults::kMaxSeqLength;
  data::OnBad on_bad_sample = data::OnBad::kError;
  uint64_t max_image_pixels = media::kDefaultMaxImagePixels;  // --max_image_pixels: larger images are refused
  torch::Device device = torch::kCPU;
  bool bf16 = false;
  // on_bad_sample skip: where the first reasons of the images left out go (file and why), when given.
  std::vector<std::string>* skip_reasons = nullptr;
  // evaluate_retrieval: fill RetrievalEval::predictions (`evaluate`'s predictions.jsonl; the trainer needs none).
  bool retrieval_predictions = false;
};

// The options of a standalone embedding run (evaluate, encode, search) with `model`: its vision image_size, and
// captions cut at --max_seq_length as model::resolve_max_seq_length has it (unset: what the model's position
// embeddings hold; a value past them is refused naming the flag).
EmbedOptions standalone_embed_options(model::BridgeTowerForContrastiveLearning& model, int batch_size,
                                      int num_workers, const std::optional<int>& max_seq_length,
                                      data::OnBad on_bad_sample, const torch::Device& device, bool bf16);

// The tokenizer of a model folder for evaluate, encode and train: tokenizer_dir's (--tokenizer_name, a folder)
// when given, else the model folder's own (tokenizer.json, or vocab.json + merges.txt); a model folder without one
// is refused naming --tokenizer_name as the way out. Either is refused when it has more ids than the model's text
// embeddings hold (model::check_vocab_fits), before any weight is read.
text::Tokenizer model_tokenizer(const std::string& model_dir, const std::string& tokenizer_dir,
                                const model::TextConfig& text);

// Matching questions over the rows of a dataset: row image_row's image, its caption choices and the label.
struct MatchingSet {
  std::shared_ptr<const data::Dataset> images;
  struct Row {
    size_t image_row = 0;
    std::vector<std::string> choices;
    int label = 0;
  };
  std::vector<Row> rows;
};

// Retrieval over the first `limit` rows of `pairs` (caption i belongs to image image_key(i)).
RetrievalEval evaluate_retrieval(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                                 std::shared_ptr<const data::Dataset> pairs, const EmbedOptions& o,
                                 size_t limit = SIZE_MAX);

// Retrieval with the contrastive loss over every row of `pairs`, read by `loader` (the run's validation loader:
// unshuffled, its transform, workers and decoded cache): each batch runs the full forward; the loss is averaged
// over the batches of 2 rows or more (one row has no negatives); a row the loader delivers twice (a skipped row's
// replacement) is scored once. o.max_seq_length cuts the captions; o's loader settings are not used.
RetrievalEval evaluate_retrieval_with_loss(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                                           std::shared_ptr<const data::Dataset> pairs, loader::Loader& loader,
                                           const EmbedOptions& o);

MatchingEval evaluate_matching(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                               const MatchingSet& set, const EmbedOptions& o);

// A split's evaluation (metrics.h's SplitEval): retrieval with the loss as above, then matching on `matching`
// (nullptr: the split has no questions).
SplitEval evaluate_split(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                         std::shared_ptr<const data::Dataset> pairs, loader::Loader& loader,
                         const MatchingSet* matching, const EmbedOptions& o);

// The good rows of a matching JSONL file (`name`; image paths relative to `folder`) as a MatchingSet; the
// returned `item_of_row` maps each set row back to its MatchingItem.
MatchingSet matching_set_of(const data::ParsedMatching& parsed, const std::string& name, const std::string& folder,
                            std::vector<size_t>* item_of_row = nullptr);

// `bridgetune encode`: every distinct image (by image_key; the first row's) and every distinct non-empty caption of
// `data`, embedded with the contrastive heads (L2-normalised: the vectors the logits use). progress(done, total)
// after each image batch. Unreadable images follow o.on_bad_sample (skip: counted, left out).
struct EncodedCollection {
  torch::Tensor images;            // [N, D] float32, CPU
  std::vector<size_t> image_rows;  // the dataset row each image was read from
  torch::Tensor texts;             // [T, D] float32, CPU
  std::vector<std::string> text_values;
  int64_t skipped_images = 0;
  double seconds = 0;
};
EncodedCollection encode_collection(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                                    std::shared_ptr<const data::Dataset> data, const EmbedOptions& o,
                                    const std::function<void(size_t, size_t)>& progress = {});
// Embeddings of some rows' images (an unreadable one throws naming it) and of some texts: search's queries.
torch::Tensor embed_image_rows(model::BridgeTowerForContrastiveLearning& model,
                               std::shared_ptr<const data::Dataset> data, const std::vector<size_t>& rows,
                               const EmbedOptions& o);
torch::Tensor embed_text_list(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                              const std::vector<std::string>& texts, const EmbedOptions& o);

// The held-out scores the built-in demo prints before and after training: matching accuracy on
// DIR/matching.jsonl and retrieval on DIR's captions (a folder written by data::write_synth).
struct HeldOutScores {
  MatchingScores matching;
  RetrievalScores retrieval;
  int64_t images = 0;
};
HeldOutScores held_out_scores(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                              const std::string& synth_dir, const EmbedOptions& o);

}  // namespace bt::eval
