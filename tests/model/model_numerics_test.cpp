// BridgeTowerForContrastiveLearning against the reference outputs of HF transformers
// (tests/fixtures/bridgetower-tiny, see its README): intermediates, embeddings, logits, loss, gradients.
#include <gtest/gtest.h>

#include "fixture_dir.h"
#include "model/bridgetower.h"

using namespace bt::model;

namespace {

// Elementwise |a - b| <= atol + rtol * |b|; reports the worst element.
::testing::AssertionResult close(const std::string& what, const Tensor& a, const Tensor& b, double rtol, double atol) {
  if (a.sizes() != b.sizes())
    return ::testing::AssertionFailure() << what << ": shape " << a.sizes() << " vs reference " << b.sizes();
  auto x = a.detach().to(torch::kDouble), y = b.detach().to(torch::kDouble);
  auto excess = (x - y).abs() - (atol + rtol * y.abs());
  double worst = excess.max().item<double>();
  if (worst <= 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": max |diff| " << (x - y).abs().max().item<double>()
                                       << " exceeds tolerance (rtol " << rtol << ", atol " << atol << ")";
}

struct Fixture {
  BridgeTowerForContrastiveLearning model{nullptr};
  std::map<std::string, Tensor> in, ref;
  Fixture() {
    model = load_contrastive(BT_FIXTURE_DIR);
    model->eval();
    in = load_tensors(std::string(BT_FIXTURE_DIR) + "/inputs.safetensors");
    ref = load_tensors(std::string(BT_FIXTURE_DIR) + "/outputs.safetensors");
  }
  ContrastiveOutput run(Intermediates* dbg = nullptr) {
    return model->forward(in.at("pixel_values"), in.at("input_ids"), in.at("attention_mask"), true, dbg);
  }
};

constexpr double kRtol = 1e-4, kAtol = 1e-5;

}  // namespace

TEST(ModelNumerics, IntermediatesMatchReference) {
  Fixture f;
  Intermediates dbg;
  torch::NoGradGuard ng;
  f.run(&dbg);
  auto check = [&](const char* prefix, const std::vector<Tensor>& got) {
    size_t n = 0;
    while (f.ref.count(prefix + std::to_string(n))) ++n;
    ASSERT_EQ(got.size(), n) << prefix;
    for (size_t i = 0; i < n; ++i) {
      std::string k = prefix + std::to_string(i);
      EXPECT_TRUE(close(k, got[i], f.ref.at(k), kRtol, kAtol));
    }
  };
  check("debug.hidden_text.", dbg.hidden_text);
  check("debug.hidden_image.", dbg.hidden_image);
  check("debug.cross_text.", dbg.cross_text);
  check("debug.cross_image.", dbg.cross_image);
  EXPECT_TRUE(close("pooler_output", dbg.pooler_output, f.ref.at("debug.pooler_output"), kRtol, kAtol));
}

TEST(ModelNumerics, OutputsAndLossMatchReference) {
  Fixture f;
  torch::NoGradGuard ng;
  auto out = f.run();
  EXPECT_TRUE(close("text_embeds", out.text_embeds, f.ref.at("text_embeds"), kRtol, kAtol));
  EXPECT_TRUE(close("image_embeds", out.image_embeds, f.ref.at("image_embeds"), kRtol, kAtol));
  EXPECT_TRUE(close("cross_embeds", out.cross_embeds, f.ref.at("cross_embeds"), kRtol, kAtol));
  EXPECT_TRUE(close("logits", out.logits, f.ref.at("logits"), kRtol, kAtol));
  EXPECT_TRUE(close("loss", out.loss, f.ref.at("loss"), kRtol, kAtol));
}

TEST(ModelNumerics, GradientsMatchReference) {
  Fixture f;
  auto out = f.run();
  out.loss.backward();
  auto params = f.model->named_parameters(true);
  int checked = 0;
  for (const auto& [k, g] : f.ref) {
    if (k.rfind("grad.", 0) != 0) continue;
    std::string name = k.substr(5);
    auto* p = params.find(name);
    ASSERT_NE(p, nullptr) << name;
    ASSERT_TRUE(p->grad().defined()) << name;
    // Gradients accumulate more rounding; compare relative to the tensor's scale.
    double scale = g.abs().max().item<double>();
    EXPECT_TRUE(close(k, p->grad(), g, 1e-3, 1e-4 * scale + 1e-7));
    ++checked;
  }
  EXPECT_GE(checked, 7);
  // nn.Embedding(padding_idx=1): the padding row gets no gradient.
  auto& wg = params["bridgetower.text_model.embeddings.word_embeddings.weight"].grad();
  EXPECT_EQ(wg[f.model->config().text.pad_token_id].abs().max().item<double>(), 0.0);
}

TEST(ModelNumerics, TrainModeDropoutChangesOutputsEvalDoesNot) {
  Fixture f;
  torch::NoGradGuard ng;
  auto a = f.run().loss.item<double>();
  auto b = f.run().loss.item<double>();
  EXPECT_EQ(a, b);
  f.model->train();
  auto c = f.run().loss.item<double>();
  EXPECT_NE(a, c);
}

TEST(ModelNumerics, UniModalEncodersReproduceTheReferenceEmbeddings) {
  Fixture f;
  torch::NoGradGuard ng;
  // Each image and each text alone gives the embeddings HF computes from the pair (the towers are uni-modal).
  Tensor text = f.model->encode_text(f.in.at("input_ids"), f.in.at("attention_mask"));
  Tensor image = f.model->encode_image(f.in.at("pixel_values"));
  EXPECT_TRUE(close("text_embeds", text, f.ref.at("text_embeds"), kRtol, kAtol));
  EXPECT_TRUE(close("image_embeds", image, f.ref.at("image_embeds"), kRtol, kAtol));
  Tensor one = f.model->encode_text(f.in.at("input_ids").slice(0, 2, 3), f.in.at("attention_mask").slice(0, 2, 3));
  EXPECT_TRUE(close("text_embeds[2] alone", one, f.ref.at("text_embeds").slice(0, 2, 3), kRtol, kAtol));
}
