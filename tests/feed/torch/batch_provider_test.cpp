// The batch providers of the training step (feed/torch/batch_provider.h): the CPU loader's in both modes, the
// in-memory cycle, the factory's choices, and the one tokenize-and-upload.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/error.h"
#include "data/captions_dataset.h"
#include "data/synth.h"
#include "text/train_bpe.h"
#include "feed/torch/batch_provider.h"
#include "feed/torch/batch_source.h"
#include "feed/torch/gpu_media.h"

namespace fs = std::filesystem;
using namespace bt;
using feed::ModelBatch;

namespace {

class BatchProviders : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_batch_provider_" + std::to_string(getpid()));
    fs::remove_all(root_);
    data::SynthOptions so;
    so.n = 24, so.images = 12, so.seed = 9, so.min_width = 64, so.max_width = 96, so.threads = 1;
    data::write_synth(root_.string(), so);
    ds_ = std::shared_ptr<const data::Dataset>(data::open_dataset(root_.string()));
    std::vector<std::string> captions;
    for (size_t i = 0; i < ds_->size(); ++i) captions.push_back(ds_->caption(i));
    tok_.emplace(text::train_tokenizer(captions, 300));
  }
  static void TearDownTestSuite() {
    ds_.reset();
    fs::remove_all(root_);
  }
  static std::unique_ptr<loader::Loader> make_loader(int workers, bool decoded = false) {
    loader::LoaderOptions lo;
    lo.num_workers = workers;
    lo.batch_size = 4;
    lo.transform.image_size = 32;
    lo.transform.mode = media::TransformMode::kTrain;  // random crops and flips: any mix-up shows
    lo.sampler.seed = 3;
    lo.sampler.batch_size = 4;
    lo.output_decoded = decoded;
    return std::make_unique<loader::Loader>(ds_, lo);
  }
  // Every batch of one segment.
  static std::vector<ModelBatch> drain(feed::BatchProvider& p, uint64_t epoch, size_t first, size_t n) {
    std::vector<ModelBatch> out;
    p.start(epoch, first, n);
    double wait = -1;
    while (auto mb = p.next(&wait)) {
      EXPECT_GE(wait, 0);
      out.push_back(std::move(*mb));
    }
    p.stop();
    return out;
  }
  static void expect_same(const ModelBatch& a, const ModelBatch& b) {
    EXPECT_EQ(a.size, b.size);
    EXPECT_EQ(a.image_keys, b.image_keys);
    EXPECT_TRUE(torch::equal(a.pixels, b.pixels));
    EXPECT_TRUE(torch::equal(a.input_ids, b.input_ids));
    EXPECT_TRUE(torch::equal(a.attention_mask, b.attention_mask));
  }
  static fs::path root_;
  static std::shared_ptr<const data::Dataset> ds_;
  static std::optional<text::Tokenizer> tok_;
};
fs::path BatchProviders::root_;
std::shared_ptr<const data::Dataset> BatchProviders::ds_;
std::optional<text::Tokenizer> BatchProviders::tok_;

}  // namespace

// A resumed segment (epoch 1 from batch 2) is the same whether a thread prepares the batches or next() does.
TEST_F(BatchProviders, BackgroundAndInlineSourcesGiveTheSameBatches) {
  auto l0 = make_loader(0), l2 = make_loader(2);
  feed::BatchSource inline_src(*l0, *tok_, 16, torch::kCPU, false), background(*l2, *tok_, 16, torch::kCPU, true);
  auto a = drain(inline_src, 1, 2, 3), b = drain(background, 1, 2, 3);
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  for (size_t i = 0; i < a.size(); ++i) expect_same(a[i], b[i]);
  // Batch 2 of epoch 1 differs from batch 0 of epoch 0 (the segment really starts where asked).
  auto first = drain(inline_src, 0, 0, 1);
  EXPECT_NE(first[0].image_keys, a[0].image_keys);
}

// The in-memory provider holds epoch 0's first batches and cycles them across start() calls, never waiting.
TEST_F(BatchProviders, InMemoryCyclesEpochZerosFirstBatches) {
  auto l = make_loader(1), ref_loader = make_loader(0);
  feed::ProviderOptions po;
  po.max_seq_length = 16;
  po.in_memory_batches = 2;
  auto p = feed::make_batch_provider(*l, *tok_, po, /*batches_per_epoch=*/6);
  feed::BatchSource ref(*ref_loader, *tok_, 16, torch::kCPU, false);
  auto expected = drain(ref, 0, 0, 2);
  p->start(0, 0, 6);
  for (int i = 0; i < 5; ++i) {
    if (i == 3) p->start(1, 0, 6);  // a new epoch does not rewind the cycle
    double wait = -1;
    auto mb = p->next(&wait);
    ASSERT_TRUE(mb);
    EXPECT_EQ(wait, 0);
    EXPECT_FALSE(mb->host);  // the pixels were copied out of the loader's buffers
    expect_same(*mb, expected[size_t(i) % 2]);
  }
}

// The factory's refusals, and its BatchSource when nothing special is asked for.
TEST_F(BatchProviders, FactoryPicksOneProviderAndRefusesImpossibleMixes) {
  auto l = make_loader(0, /*decoded=*/true);
  feed::ProviderOptions po;
  po.media_pipeline = true;
  po.in_memory_batches = 2;
  // The factory's error for these options ("" when it made a provider).
  auto refusal = [&](const feed::ProviderOptions& o) -> std::string {
    try {
      feed::make_batch_provider(*l, *tok_, o, 6);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(refusal(po).find("--use_media_pipeline cannot be combined"), std::string::npos) << refusal(po);
  if (!feed::GpuMediaPipeline::available()) {
    po.in_memory_batches = 0;
    EXPECT_NE(refusal(po).find("--use_media_pipeline needs"), std::string::npos) << refusal(po);
  }
  auto l0 = make_loader(0);
  feed::ProviderOptions plain;
  plain.max_seq_length = 16;
  plain.background = false;
  auto p = feed::make_batch_provider(*l0, *tok_, plain, 6);
  EXPECT_NE(dynamic_cast<feed::BatchSource*>(p.get()), nullptr);
  EXPECT_EQ(drain(*p, 0, 4, 10).size(), 2u);  // the segment ends with the epoch's 6 batches
}

// Captions are padded to the longest in the batch, cut at max_len, as the tokenizer encodes them.
TEST_F(BatchProviders, UploadCaptionsIsTheTokenizersBatchEncoding) {
  const std::vector<std::string> captions = {"a man", "two men in hats at a long table with a balloon and a dog"};
  ModelBatch m;
  feed::upload_captions(m, captions, *tok_, 8, torch::kCPU);
  auto enc = tok_->encode_batch(captions, 8, text::Padding::kLongest, 1);
  ASSERT_EQ(m.input_ids.sizes(), (std::vector<int64_t>{2, enc.length}));
  EXPECT_EQ(enc.length, 8);
  EXPECT_EQ(std::vector<int64_t>(m.input_ids.data_ptr<int64_t>(), m.input_ids.data_ptr<int64_t>() + 16), enc.input_ids);
  EXPECT_EQ(std::vector<int64_t>(m.attention_mask.data_ptr<int64_t>(), m.attention_mask.data_ptr<int64_t>() + 16),
            enc.attention_mask);
  EXPECT_EQ(m.attention_mask[0].sum().item<int64_t>() < 8, true);  // the short caption is padded
  // Each row's real length, on the host, for the step's FLOP count (model/flops.h: padding apart).
  EXPECT_EQ(m.text_lengths, (std::vector<int32_t>{int32_t(m.attention_mask[0].sum().item<int64_t>()), 8}));
}
