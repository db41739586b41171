#include "python/loader_core.h"

#include <utility>

#include "common/error.h"
#include "data/bad_rows.h"
#include "media/augment.h"
#include "data/user_command.h"
#include "source/mixed_source.h"

namespace bt::data {
// The Python module's key to data/user_command.h: `data` is its caller's argument (what they typed), the one
// value of LoaderOptions a pipe: command may come from.
struct PythonArguments {
  static TypedByUser key() { return TypedByUser(); }
};
}  // namespace bt::data

namespace bt::py {
namespace {

void check(const CoreOptions& o) {
  if (o.batch_size < 1) fail("batch_size must be >= 1 (got ", o.batch_size, ")");
  if (o.num_workers < 0) fail("num_workers must be >= 0 (got ", o.num_workers, ")");
  if (o.image_size < 1 || o.image_size > 16384) fail("image_size must be in 1..16384 (got ", o.image_size, ")");
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size)
    fail("rank must be in 0..world_size-1 (got rank ", o.rank, ", world_size ", o.world_size, ")");
  if (o.padding != "longest" && o.padding != "max_length")
    fail("padding: expected 'longest' or 'max_length', got '", o.padding, "'");
  if (o.max_seq_length < 3) fail("max_seq_length must be >= 3 (got ", o.max_seq_length, ")");
  for (float s : o.std)
    if (!(s > 0)) fail("std: every value must be > 0");
}

}  // namespace

media::TransformSpec transform_spec(int image_size, const std::string& transform, int jpeg_dct_scaling,
                                    uint64_t max_image_pixels) {
  if (max_image_pixels < 1) fail("max_image_pixels must be >= 1 (got ", max_image_pixels, ")");
  media::TransformSpec spec;
  spec.image_size = image_size;
  spec.max_image_pixels = max_image_pixels;
  media::AugmentOptions augment;  // a preset of media/augment.h, as `train --train_transform` names it
  augment.preset = transform;
  media::apply_augment(augment, spec, "transform", "");
  if (jpeg_dct_scaling >= 0) spec.dct_scaling = jpeg_dct_scaling != 0;  // < 0: the spec's default, as the CLI has it
  return spec;
}

LoaderCore::LoaderCore(CoreOptions o) : opt_(std::move(o)) {
  check(opt_);
  data::declare_user_value(opt_.data, data::PythonArguments::key());
  for (const std::string& d : opt_.mix_data) data::declare_user_value(d, data::PythonArguments::key());
  source::ReadOptions read;
  read.image_column = opt_.image_column;
  read.caption_column = opt_.caption_column;
  read.on_bad = data::parse_on_bad(opt_.on_bad_sample, "on_bad_sample");
  const source::SourceOptions so = source::source_options(read, "data", 0, /*locality_order=*/true);
  src_ = opt_.mix_data.empty() ? source::open_source(opt_.data, so)
                               : source::open_mixed(opt_.mix_data, {opt_.mix_weights, loader::parse_mix_stopping(
                                                                        opt_.mix_stopping), opt_.seed}, so);
  if (!opt_.tokenizer_dir.empty()) tok_ = text::Tokenizer::from_dir(opt_.tokenizer_dir);

  loader::LoaderOptions lo;
  lo.num_workers = opt_.num_workers;
  lo.prefetch_batches = opt_.prefetch_batches;
  lo.batch_size = opt_.batch_size;
  lo.transform = transform_spec(opt_.image_size, opt_.transform, opt_.jpeg_dct_scaling, opt_.max_image_pixels);
  lo.transform.mean = opt_.mean;  // the one copy the loader's normalisation reads
  lo.transform.std = opt_.std;
  lo.on_bad_sample = read.on_bad;
  lo.decoded_cache_mb = opt_.decoded_cache_mb;
  lo.sampler.seed = opt_.seed;
  lo.sampler.shuffle = opt_.shuffle;
  lo.sampler.rank = opt_.rank;
  lo.sampler.world_size = opt_.world_size;
  lo.sampler.drop_last = opt_.drop_last;
  lo.sampler.dedupe_images_in_batch = opt_.dedupe_images_in_batch;
  if (opt_.shuffle || src_.mix) src_.apply_order(lo.sampler);  // a mix's order holds unshuffled too
  loader_ = std::make_shared<loader::Loader>(src_.dataset, std::move(lo));
}

size_t LoaderCore::batches_per_epoch() const {
  const size_t rows = rows_per_epoch(), b = static_cast<size_t>(opt_.batch_size);
  return opt_.drop_last ? rows / b : (rows + b - 1) / b;
}

void LoaderCore::start(uint64_t epoch, size_t position) {
  // The end of the epoch is a valid position too: a state saved right after a short last batch.
  const bool boundary = position % static_cast<size_t>(opt_.batch_size) == 0 || position == rows_per_epoch();
  if (!boundary || position > rows_per_epoch())
    fail("resume position ", position, " is not a batch boundary of this loader (batch_size ", opt_.batch_size,
         ", ", rows_per_epoch(), " rows per epoch): was the state saved with other options?");
  loader_->start_epoch(epoch, position);
  started_ = true;
}

std::shared_ptr<Held> LoaderCore::next() {
  if (!started_) fail("DataLoader: next() before start()");
  auto h = std::make_shared<Held>();
  h->batch = loader_->next();
  if (!h->batch || (opt_.drop_last && h->batch->size < opt_.batch_size)) {
    started_ = false;
    return nullptr;  // `h` dies first: the batch goes back before the loader reference does
  }
  h->loader = loader_;
  if (tok_) {
    const auto padding = opt_.padding == "longest" ? text::Padding::kLongest : text::Padding::kMaxLength;
    h->tokens = tok_->encode_batch(h->batch->captions, opt_.max_seq_length, padding, 1);
  }
  return h;
}

}  // namespace bt::py
