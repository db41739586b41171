#include "model/flops.h"

#include <utility>

namespace bt::model {

namespace {

double mm(double m, double n, double k) { return 2 * m * n * k; }

// Adds `f` FLOPs of one op class to one part.
void add(ForwardFlops& out, double ForwardFlops::*op, double ForwardFlops::*part, double f) {
  out.*op += f;
  out.*part += f;
}

// A BERT-style layer's attention block (query/key/value/dense, BridgeTowerAttention) for lq query tokens attending
// to lk tokens (self-attention: lq == lk), width h.
void attention_block(ForwardFlops& out, double ForwardFlops::*part, double lq, double lk, double h) {
  add(out, &ForwardFlops::linear, part, mm(lq, h, h) + 2 * mm(lk, h, h) + mm(lq, h, h));  // q; k, v; dense
  add(out, &ForwardFlops::attention, part, mm(lq, lk, h) + mm(lq, h, lk));               // q k^T; p v
}

void feed_forward(ForwardFlops& out, double ForwardFlops::*part, double l, double h, double inter) {
  add(out, &ForwardFlops::linear, part, mm(l, inter, h) + mm(l, h, inter));
}

void vision_tower(ForwardFlops& out, const BridgeTowerConfig& c) {
  const VisionConfig& v = c.vision;
  const double grid = v.image_size / v.patch_size, hv = v.hidden_size, li = double(image_tokens(c));
  add(out, &ForwardFlops::patch, &ForwardFlops::vision, mm(grid * grid, hv, double(v.num_channels) * v.patch_size * v.patch_size));
  // The forward runs one vision block per text layer (BridgeTowerModel.forward); blocks past that are never used.
  const double blocks = c.text.num_hidden_layers;
  // in_proj (3h), out_proj, c_fc (4h), c_proj
  add(out, &ForwardFlops::linear, &ForwardFlops::vision, blocks * (mm(li, 3 * hv, hv) + mm(li, hv, hv) + 2 * mm(li, 4 * hv, hv)));
  add(out, &ForwardFlops::attention, &ForwardFlops::vision, blocks * 2 * mm(li, li, hv));
}

void text_tower(ForwardFlops& out, const TextConfig& t, double lt) {
  for (int i = 0; i < t.num_hidden_layers; ++i) {
    attention_block(out, &ForwardFlops::text, lt, lt, t.hidden_size);
    feed_forward(out, &ForwardFlops::text, lt, t.hidden_size, t.intermediate_size);
  }
}

// Each cross-modal step: both towers' outputs through cross_modal_{text,image}_transform (every token), then the
// text layer (self over text, cross onto the image) and the image layer (the reverse), built from text_config.
void cross_modal(ForwardFlops& out, const BridgeTowerConfig& c, double lt) {
  const double h = c.hidden_size, li = double(image_tokens(c)), inter = c.text.intermediate_size;
  double ForwardFlops::*part = &ForwardFlops::cross_modal;
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    add(out, &ForwardFlops::linear, part, mm(lt, h, c.text.hidden_size) + mm(li, h, c.vision.hidden_size));
    for (auto [self, other] : {std::pair{lt, li}, std::pair{li, lt}}) {
      attention_block(out, part, self, self, h);
      attention_block(out, part, self, other, h);
      feed_forward(out, part, self, h, inter);
    }
  }
}

// On each sample's first token: the two cross-modal poolers, the itc heads (text, image after the image transform,
// cross-modal on both pooled halves).
void heads(ForwardFlops& out, const BridgeTowerConfig& c) {
  const double h = c.hidden_size, e = c.contrastive_hidden_size;
  add(out, &ForwardFlops::linear, &ForwardFlops::heads,
      2 * mm(1, h, h) + mm(1, e, h) + mm(1, h, c.vision.hidden_size) + mm(1, e, h) + mm(1, e, 2 * h));
}

}  // namespace

int64_t image_tokens(const BridgeTowerConfig& c) {
  const int64_t grid = c.vision.image_size / c.vision.patch_size;
  return grid * grid + 1;
}

ForwardFlops sample_forward_flops(const BridgeTowerConfig& c, int64_t text_len) {
  ForwardFlops f;
  vision_tower(f, c);
  text_tower(f, c.text, double(text_len));
  cross_modal(f, c, double(text_len));
  heads(f, c);
  return f;
}

ForwardFlops forward_flops(const BridgeTowerConfig& c, int64_t batch, int64_t text_len) {
  const ForwardFlops s = sample_forward_flops(c, text_len);
  const double b = double(batch);
  ForwardFlops f;
  for (auto m : {&ForwardFlops::patch, &ForwardFlops::linear, &ForwardFlops::attention, &ForwardFlops::vision,
                 &ForwardFlops::text, &ForwardFlops::cross_modal, &ForwardFlops::heads})
    f.*m = b * (s.*m);
  // text-image, text-cross and image-cross similarities, [B, E] x [E, B] each
  add(f, &ForwardFlops::loss, &ForwardFlops::heads, 3 * mm(b, b, c.contrastive_hidden_size));
  return f;
}

double hf_extra_head_flops(const BridgeTowerConfig& c) {
  return mm(double(image_tokens(c) - 1), c.hidden_size, c.vision.hidden_size);
}

StepFlops& StepFlops::operator+=(const StepFlops& o) {
  model += o.model, padding += o.padding, text_tokens += o.text_tokens, samples += o.samples;
  return *this;
}

StepFlops train_flops(const BridgeTowerConfig& c, int64_t padded_len, const std::vector<int32_t>& real_lengths) {
  const auto batch = int64_t(real_lengths.size());
  StepFlops s;
  s.samples = double(batch);
  s.text_tokens = double(batch * padded_len);
  s.model = kTrainFlopsPerForward * forward_flops(c, batch, padded_len).total();
  const double padded_sample = sample_forward_flops(c, padded_len).total();
  for (int32_t len : real_lengths)
    if (len < padded_len) s.padding += kTrainFlopsPerForward * (padded_sample - sample_forward_flops(c, len).total());
  return s;
}

ParameterCounts contrastive_parameter_counts(const BridgeTowerConfig& c) {
  const TextConfig& t = c.text;
  const VisionConfig& v = c.vision;
  const int64_t h = c.hidden_size, th = t.hidden_size, ti = t.intermediate_size, hv = v.hidden_size;
  const int64_t e = c.contrastive_hidden_size;
  auto linear = [](int64_t in, int64_t out) { return in * out + out; };
  const int64_t ln = 2;  // per channel: weight and bias
  ParameterCounts p;
  p.embedding = (int64_t(t.vocab_size) + t.max_position_embeddings + t.type_vocab_size) * th +  // text
                (image_tokens(c) * hv) +                                                       // vision positions
                2 * h;                                                                         // token types
  const auto bert_attention = [&](int64_t w) { return 4 * linear(w, w) + ln * w; };
  const auto bert_ffn = [&](int64_t w, int64_t inter) { return linear(w, inter) + linear(inter, w) + ln * w; };
  const int64_t text = ln * th + t.num_hidden_layers * (bert_attention(th) + bert_ffn(th, ti)) + linear(th, th);
  const int64_t blocks = v.num_hidden_layers - (v.remove_last_layer ? 1 : 0);
  const int64_t block = linear(hv, 3 * hv) + linear(hv, hv) + linear(hv, 4 * hv) + linear(4 * hv, hv) + 2 * ln * hv;
  const int64_t vision = hv + hv * v.num_channels * v.patch_size * v.patch_size + 2 * ln * hv + blocks * block +
                         (v.share_layernorm ? 0 : v.num_hidden_layers * ln * hv);
  const int64_t links = c.share_link_tower_layers ? 1 : c.num_hidden_layers - 1;
  const int64_t link = ln * h + (c.link_tower_type == "add" ? 0 : 1);  // scaled_factor or beta
  const int64_t cross = linear(th, h) + linear(hv, h) +
                        2 * c.num_hidden_layers * (2 * bert_attention(h) + bert_ffn(h, ti)) + 2 * linear(h, h) +
                        2 * ln * h + 2 * links * link;
  const int64_t itc = 2 * linear(h, e) + linear(2 * h, e) + 1;  // + logit_scale
  p.total = p.embedding + text + vision + cross + itc;
  return p;
}

double hf_total_flos(const BridgeTowerConfig& c, double text_tokens) {
  const ParameterCounts p = contrastive_parameter_counts(c);
  return 6.0 * double(p.total - p.embedding) * text_tokens;
}

nlohmann::json work_json(const BridgeTowerConfig& c, const StepFlops& all) {
  const double n = all.samples > 0 ? all.samples : 1;
  return {{"total_flos", hf_total_flos(c, all.text_tokens)},
          {"model_flops", all.model},
          {"model_flops_per_sample", all.model / n},
          {"padding_flops_percent", all.model > 0 ? 100 * all.padding / all.model : 0.0},
          {"text_tokens_per_sample", all.text_tokens / n}};
}

}  // namespace bt::model
