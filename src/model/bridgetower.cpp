// The cross-modal encoder (BridgeTowerModel.forward) and the three head models.
#include "model/bridgetower.h"

#include "common/error.h"
#include "model/contrastive_loss.h"

namespace bt::model {

namespace F = torch::nn::functional;

// libtorch's errors carry a C++ backtrace over many lines; the user gets one line naming the config file.
[[noreturn]] static void fail_building(const BridgeTowerConfig& c, const std::string& why) {
  const std::string first = why.substr(0, why.find('\n'));
  bt::fail(c.source.empty() ? std::string("config") : c.source, ": cannot build the model from this config (",
           first, "); check its sizes: hidden_size, intermediate_size, vocab_size, the layer counts");
}

// A function-try-block: any libtorch error (or allocation failure) while building the modules is reported
// through fail_building().
BridgeTowerModelImpl::BridgeTowerModelImpl(const BridgeTowerConfig& c, const torch::TensorOptions& o) try : cfg(c) {
  c.validate(c.source.empty() ? "config" : c.source);
  const int64_t h = c.hidden_size;
  cross_modal_text_transform = register_module("cross_modal_text_transform", Linear(c.text.hidden_size, h, true, o));
  cross_modal_image_transform =
      register_module("cross_modal_image_transform", Linear(c.vision.hidden_size, h, true, o));
  token_type_embeddings = register_module("token_type_embeddings", Embedding(2, h, -1, o));
  visual = VisionTransformer(c.vision, o);
  register_module("vision_model", std::make_shared<torch::nn::Module>())->register_module("visual", visual.ptr());
  text_model = register_module("text_model", TextModel(c.text, o));
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    cross_image_layers.emplace_back(c.text, o);
    cross_text_layers.emplace_back(c.text, o);
  }
  register_list(*this, "cross_modal_image_layers", cross_image_layers);
  register_list(*this, "cross_modal_text_layers", cross_text_layers);
  cross_modal_image_pooler = register_module("cross_modal_image_pooler", Pooler(h, o));
  cross_modal_text_pooler = register_module("cross_modal_text_pooler", Pooler(h, o));
  cross_modal_text_layernorm = register_module("cross_modal_text_layernorm", LayerNorm(h, c.layer_norm_eps, o));
  cross_modal_image_layernorm = register_module("cross_modal_image_layernorm", LayerNorm(h, c.layer_norm_eps, o));
  if (c.share_link_tower_layers) {
    text_links.emplace_back(c, o);
    image_links.emplace_back(c, o);
    register_module("cross_modal_text_link_tower", text_links[0].ptr());
    register_module("cross_modal_image_link_tower", image_links[0].ptr());
  } else {
    for (int i = 0; i + 1 < c.num_hidden_layers; ++i) {
      text_links.emplace_back(c, o);
      image_links.emplace_back(c, o);
    }
    register_list(*this, "cross_modal_text_link_tower", text_links);
    register_list(*this, "cross_modal_image_link_tower", image_links);
  }
} catch (const c10::Error& e) {
  fail_building(c, e.what());
} catch (const std::bad_alloc&) {
  fail_building(c, "out of memory");
}

BridgeTowerOutput BridgeTowerModelImpl::forward(const Tensor& pixel_values, const Tensor& input_ids,
                                                const Tensor& attention_mask, Intermediates* dbg) {
  if (attention_mask.defined() && attention_mask.sizes() != input_ids.sizes())
    bt::fail("attention_mask has shape ", shape_str(attention_mask.sizes()), ", input_ids ", shape_str(input_ids.sizes()));
  if (pixel_values.size(0) != input_ids.size(0))
    bt::fail("pixel_values has batch ", pixel_values.size(0), ", input_ids ", input_ids.size(0));
  auto dtype = cross_modal_text_transform->weight.scalar_type();
  Tensor mask01 = attention_mask.defined() ? attention_mask : torch::ones_like(input_ids);
  Tensor text_mask = extended_attention_mask(mask01, dtype);
  // Image tokens are never masked: HF's extended image mask is all zeros, i.e. no mask.
  const Tensor no_mask;

  auto& tlayers = text_model->layers;
  auto& vblocks = visual->resblocks;
  const size_t n_text = tlayers.size();
  const size_t split = n_text - cfg.num_hidden_layers + 1;

  Tensor text = text_model->embeddings(input_ids);
  if (dbg) dbg->hidden_text.push_back(text);
  for (size_t i = 0; i < split; ++i) {
    text = tlayers[i](text, text_mask);
    if (dbg) dbg->hidden_text.push_back(text);
  }
  Tensor img = visual->embed(pixel_values);
  if (dbg) dbg->hidden_image.push_back(img);
  for (size_t i = 0; i < split; ++i) {
    img = vblocks[i](img);
    if (dbg) dbg->hidden_image.push_back(img);
  }

  Tensor tt_text = token_type_embeddings->weight[0];
  Tensor tt_img = token_type_embeddings->weight[1];
  Tensor cross_text_in = cross_modal_text_layernorm(cross_modal_text_transform(text) + tt_text);
  Tensor cross_img_in = cross_modal_image_layernorm(cross_modal_image_transform(visual->post(img)) + tt_img);

  Tensor ct = cross_text_layers[0](cross_text_in, cross_img_in, text_mask, no_mask);
  Tensor ci = cross_image_layers[0](cross_img_in, cross_text_in, no_mask, text_mask);
  if (dbg) {
    dbg->cross_text.push_back(ct);
    dbg->cross_image.push_back(ci);
  }
  for (size_t i = split, j = 0; i < n_text; ++i, ++j) {
    text = tlayers[i](text, text_mask);
    img = vblocks[i](img);
    Tensor img_ln = cross_modal_image_transform(visual->post(img)) + tt_img;
    auto& tl = text_links[cfg.share_link_tower_layers ? 0 : j];
    auto& il = image_links[cfg.share_link_tower_layers ? 0 : j];
    Tensor ct_ = tl(cross_modal_text_transform(text) + tt_text, ct);
    Tensor ci_ = il(img_ln, ci);
    ct = cross_text_layers[j + 1](ct_, ci_, text_mask, no_mask);
    ci = cross_image_layers[j + 1](ci_, ct_, no_mask, text_mask);
    if (dbg) {
      dbg->hidden_text.push_back(text);
      dbg->hidden_image.push_back(img);
      dbg->cross_text.push_back(ct);
      dbg->cross_image.push_back(ci);
    }
  }
  BridgeTowerOutput out;
  out.text_features = ct;
  out.image_features = ci;
  out.pooler_output = torch::cat({cross_modal_text_pooler(ct), cross_modal_image_pooler(ci)}, -1);
  out.text_last = text;
  out.image_last = img;
  if (dbg) dbg->pooler_output = out.pooler_output;
  return out;
}

// ---------------- contrastive ----------------

BridgeTowerForContrastiveLearningImpl::BridgeTowerForContrastiveLearningImpl(const BridgeTowerConfig& c,
                                                                             const torch::TensorOptions& o)
    : PretrainedModel(c) {
  const int64_t h = c.hidden_size, e = c.contrastive_hidden_size;
  bridgetower = register_module("bridgetower", BridgeTowerModel(c, o));
  auto head = [&](const char* name, int64_t in) {
    Linear fc(in, e, true, o);
    register_module(name, std::make_shared<torch::nn::Module>())->register_module("fc", fc.ptr());
    return fc;
  };
  itc_text_head = head("itc_text_head", h);
  itc_image_head = head("itc_image_head", h);
  itc_cross_modal_head = head("itc_cross_modal_head", 2 * h);
  logit_scale = register_parameter("logit_scale", torch::empty({}, o));
  init_weights();
}

ContrastiveOutput BridgeTowerForContrastiveLearningImpl::forward(const Tensor& pixel_values, const Tensor& input_ids,
                                                                 const Tensor& attention_mask, bool return_loss,
                                                                 Intermediates* dbg) {
  auto bo = bridgetower->forward(pixel_values, input_ids, attention_mask, dbg);
  auto& bt = *bridgetower;
  // Only the first token feeds the heads; ln_post and the transform act per token, so slicing first is exact.
  Tensor img_cls = bt.cross_modal_image_transform(bt.visual->post(bo.image_last.select(1, 0))) + bt.image_token_type();
  auto norm = F::NormalizeFuncOptions().p(2).dim(-1);
  ContrastiveOutput out;
  out.text_embeds = F::normalize(itc_text_head(bo.text_last.select(1, 0)), norm);
  out.image_embeds = F::normalize(itc_image_head(img_cls), norm);
  out.cross_embeds = F::normalize(itc_cross_modal_head(bo.pooler_output), norm);
  out.logits = torch::stack({out.text_embeds, out.image_embeds, out.cross_embeds}, -2);
  if (return_loss) out.loss = contrastive_loss(out.text_embeds, out.image_embeds, out.cross_embeds, logit_scale);
  return out;
}

Tensor BridgeTowerForContrastiveLearningImpl::encode_text(const Tensor& input_ids, const Tensor& attention_mask) {
  auto& bt = *bridgetower;
  Tensor mask01 = attention_mask.defined() ? attention_mask : torch::ones_like(input_ids);
  Tensor mask = extended_attention_mask(mask01, bt.cross_modal_text_transform->weight.scalar_type());
  Tensor text = bt.text_model->embeddings(input_ids);
  for (auto& layer : bt.text_model->layers) text = layer(text, mask);
  return F::normalize(itc_text_head(text.select(1, 0)), F::NormalizeFuncOptions().p(2).dim(-1));
}

Tensor BridgeTowerForContrastiveLearningImpl::encode_image(const Tensor& pixel_values) {
  auto& bt = *bridgetower;
  Tensor img = bt.visual->embed(pixel_values);
  for (auto& block : bt.visual->resblocks) img = block(img);
  Tensor cls = bt.cross_modal_image_transform(bt.visual->post(img.select(1, 0))) + bt.image_token_type();
  return F::normalize(itc_image_head(cls), F::NormalizeFuncOptions().p(2).dim(-1));
}

// ---------------- image-text matching ----------------

BridgeTowerForImageAndTextRetrievalImpl::BridgeTowerForImageAndTextRetrievalImpl(const BridgeTowerConfig& c,
                                                                                 const torch::TensorOptions& o)
    : PretrainedModel(c) {
  bridgetower = register_module("bridgetower", BridgeTowerModel(c, o));
  itm_fc = Linear(2 * c.hidden_size, 2, true, o);
  register_module("itm_score", std::make_shared<torch::nn::Module>())->register_module("fc", itm_fc.ptr());
  init_weights();
}

ClassifierOutput BridgeTowerForImageAndTextRetrievalImpl::forward(const Tensor& pixel_values, const Tensor& input_ids,
                                                                  const Tensor& attention_mask, const Tensor& labels) {
  ClassifierOutput out;
  out.logits = itm_fc(bridgetower->forward(pixel_values, input_ids, attention_mask).pooler_output);
  if (labels.defined()) out.loss = F::cross_entropy(out.logits, labels.to(out.logits.device()));
  return out;
}

// ---------------- masked LM ----------------

BridgeTowerForMaskedLMImpl::BridgeTowerForMaskedLMImpl(const BridgeTowerConfig& c, const torch::TensorOptions& o)
    : PretrainedModel(c) {
  bridgetower = register_module("bridgetower", BridgeTowerModel(c, o));
  auto head = register_module("mlm_score", std::make_shared<torch::nn::Module>());
  auto tr = head->register_module("transform", std::make_shared<torch::nn::Module>());
  transform_dense = Linear(c.hidden_size, c.hidden_size, true, o);
  transform_ln = LayerNorm(c.hidden_size, c.layer_norm_eps, o);
  tr->register_module("dense", transform_dense.ptr());
  tr->register_module("LayerNorm", transform_ln.ptr());
  decoder = Linear(c.hidden_size, c.text.vocab_size, false, o);
  head->register_module("decoder", decoder.ptr());
  bias = head->register_parameter("bias", torch::empty({c.text.vocab_size}, o));
  init_weights();
}

ClassifierOutput BridgeTowerForMaskedLMImpl::forward(const Tensor& pixel_values, const Tensor& input_ids,
                                                     const Tensor& attention_mask, const Tensor& labels) {
  auto feats = bridgetower->forward(pixel_values, input_ids, attention_mask).text_features;
  ClassifierOutput out;
  out.logits = decoder(transform_ln(torch::gelu(transform_dense(feats)))) + bias;
  if (labels.defined())
    out.loss = F::cross_entropy(out.logits.view({-1, cfg_.text.vocab_size}), labels.to(out.logits.device()).view({-1}),
                                F::CrossEntropyFuncOptions().ignore_index(-100));
  return out;
}

}  // namespace bt::model
