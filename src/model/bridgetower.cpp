// The cross-modal encoder (BridgeTowerModel.forward) and the three head models.
#include "model/bridgetower.h"

#include "common/error.h"
#include "kernels/cuda_ops.h"
#include "model/contrastive_loss.h"
#include "model/grad_checkpoint.h"

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
  // The model's fused ops (QuickGELU) for CUDA tensors, whoever builds it: train, evaluate, forward, encode.
  kernels::register_cuda_ops();
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

// The cross-modal steps as checkpointable segments. They capture modules and constants by value (backward may
// run them after forward returned) and read the token types from the module inside, so a recomputation never
// reaches back into the outer graph. Image tokens are never masked (HF's extended image mask is all zeros).
Segment BridgeTowerModelImpl::first_cross_step(const Tensor& text_mask) {
  return [=, tte = token_type_embeddings, tt = cross_modal_text_transform, it = cross_modal_image_transform,
          vis = visual, ln_t = cross_modal_text_layernorm, ln_i = cross_modal_image_layernorm,
          lt = cross_text_layers[0], li = cross_image_layers[0]](const Tensors& in) mutable {
    const Tensor no_mask;
    Tensor t_in = ln_t(tt(in[0]) + tte->weight[0]);
    Tensor i_in = ln_i(it(vis->post(in[1])) + tte->weight[1]);
    return Tensors{lt(t_in, i_in, text_mask, no_mask), li(i_in, t_in, no_mask, text_mask)};
  };
}

Segment BridgeTowerModelImpl::cross_step(size_t j, const Tensor& text_mask) {
  const size_t link = cfg.share_link_tower_layers ? 0 : j;
  return [=, tte = token_type_embeddings, tt = cross_modal_text_transform, it = cross_modal_image_transform,
          vis = visual, tl = text_links[link], il = image_links[link], lt = cross_text_layers[j + 1],
          li = cross_image_layers[j + 1]](const Tensors& in) mutable {
    const Tensor no_mask;
    Tensor ct = tl(tt(in[0]) + tte->weight[0], in[2]);
    Tensor ci = il(it(vis->post(in[1])) + tte->weight[1], in[3]);
    return Tensors{lt(ct, ci, text_mask, no_mask), li(ci, ct, no_mask, text_mask)};
  };
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

  auto& tlayers = text_model->layers;
  auto& vblocks = visual->resblocks;
  const size_t n_text = tlayers.size();
  const size_t split = n_text - cfg.num_hidden_layers + 1;

  // One segment of the forward, checkpointed when gradient_checkpointing is on (not while recording
  // intermediates). The last text layer and vision block are not: backward needs their activations soon, so
  // keeping them saves a recomputation for one layer's memory (small preset, batch 32, CPU: step time 1.36x ->
  // 1.25x of no checkpointing; the cross-modal steps, twice their size, are all checkpointed).
  const bool ckpt = gradient_checkpointing && !dbg;
  auto run = [ckpt](const Segment& fn, const Tensors& in, bool last) {
    return ckpt && !last ? checkpointed(fn, in) : fn(in);
  };
  auto text_layer = [&](size_t i, const Tensor& x) {
    return run([layer = tlayers[i], text_mask](const Tensors& in) mutable { return Tensors{layer(in[0], text_mask)}; },
               {x}, i + 1 == n_text)[0];
  };
  auto vision_block = [&](size_t i, const Tensor& x) {
    return run([block = vblocks[i]](const Tensors& in) mutable { return Tensors{block(in[0])}; }, {x},
               i + 1 == n_text)[0];
  };

  Tensor text = text_model->embeddings(input_ids);
  if (dbg) dbg->hidden_text.push_back(text);
  for (size_t i = 0; i < split; ++i) {
    text = text_layer(i, text);
    if (dbg) dbg->hidden_text.push_back(text);
  }
  Tensor img = visual->embed(pixel_values);
  if (dbg) dbg->hidden_image.push_back(img);
  for (size_t i = 0; i < split; ++i) {
    img = vision_block(i, img);
    if (dbg) dbg->hidden_image.push_back(img);
  }
  Tensors c = run(first_cross_step(text_mask), {text, img}, false);
  Tensor ct = c[0], ci = c[1];
  if (dbg) {
    dbg->cross_text.push_back(ct);
    dbg->cross_image.push_back(ci);
  }
  for (size_t i = split, j = 0; i < n_text; ++i, ++j) {
    text = text_layer(i, text);
    img = vision_block(i, img);
    c = run(cross_step(j, text_mask), {text, img, ct, ci}, false);
    ct = c[0], ci = c[1];
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
