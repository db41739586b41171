// Layers, the CLIP vision tower and the RoBERTa text tower (see modules.h for the naming contract).
#include <torch/version.h>

#include <cmath>
#include <limits>

#include "common/error.h"
#include "kernels/attention_probs/attention_probs.h"
#include "kernels/dropout/dropout.h"
#include "kernels/gemm/gemm.h"
#include "kernels/quick_gelu/quick_gelu.h"
#include "model/attention_select.h"
#include "model/modules.h"

namespace bt::model {

namespace {
// [B, L, H] -> [B, heads, L, H / heads]
Tensor split_heads(const Tensor& x, int64_t heads) {
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}
Tensor merge_heads(const Tensor& x) {
  auto t = x.transpose(1, 2).contiguous();
  return t.view({t.size(0), t.size(1), t.size(2) * t.size(3)});
}
}  // namespace

LinearImpl::LinearImpl(int64_t in, int64_t out, bool has_bias, const torch::TensorOptions& o) {
  weight = register_parameter("weight", torch::empty({out, in}, o));
  if (has_bias) bias = register_parameter("bias", torch::empty({out}, o));
}
Tensor LinearImpl::forward(const Tensor& x) {
  Tensor y = kernels::linear(x, weight, bias);
  if (!lora_A.defined()) return y;
  const Tensor in = lora_dropout > 0 && is_training() ? torch::dropout(x, lora_dropout, true) : x;
  return y + kernels::linear(kernels::linear(in, lora_A, {}), lora_B, {}) * lora_scaling;
}

LayerNormImpl::LayerNormImpl(int64_t n, double eps_, const torch::TensorOptions& o) : eps(eps_) {
  weight = register_parameter("weight", torch::empty({n}, o));
  bias = register_parameter("bias", torch::empty({n}, o));
}
Tensor LayerNormImpl::forward(const Tensor& x) { return torch::layer_norm(x, {weight.size(0)}, weight, bias, eps); }

EmbeddingImpl::EmbeddingImpl(int64_t n, int64_t dim, int64_t pad, const torch::TensorOptions& o) : padding_idx(pad) {
  weight = register_parameter("weight", torch::empty({n, dim}, o));
}
Tensor EmbeddingImpl::forward(const Tensor& ids) { return torch::embedding(weight, ids, padding_idx); }

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double dropout, bool train) {
  // torch >= 2: scaled_dot_product_attention with the backend model/attention_backend.h picks for these inputs
  // (flash, cuDNN, memory-efficient, math, or torch's own on the CPU); undefined when it picks eager, and always
  // on libtorch 1.13, which has no public fused kernel: then the same math as HF's eager attention.
  if (Tensor out = sdpa_attention(q, k, v, mask, dropout, train); out.defined()) return out;
  return kernels::batched_matmul(kernels::attention_weights(q, k, mask, dropout, train), v, /*transpose_b=*/false);
}

Tensor extended_attention_mask(const Tensor& mask01, torch::ScalarType dtype) {
  double lowest = dtype == torch::kHalf       ? -65504.0
                  : dtype == torch::kBFloat16 ? -3.3895313892515355e38
                  : dtype == torch::kDouble   ? std::numeric_limits<double>::lowest()
                                              : static_cast<double>(std::numeric_limits<float>::lowest());
  auto m = mask01.to(dtype);
  return ((1.0 - m) * lowest).view({m.size(0), 1, 1, m.size(1)});
}

// ---------------- vision ----------------

ResidualAttentionImpl::ResidualAttentionImpl(const VisionConfig& c, const torch::TensorOptions& o)
    : heads(c.hidden_size / 64) {
  const int64_t h = c.hidden_size;
  attn = register_module("attn", std::make_shared<torch::nn::Module>());
  in_proj_weight = attn->register_parameter("in_proj_weight", torch::empty({3 * h, h}, o));
  in_proj_bias = attn->register_parameter("in_proj_bias", torch::empty({3 * h}, o));
  out_proj = Linear(h, h, true, o);
  attn->register_module("out_proj", out_proj.ptr());
  ln_1 = register_module("ln_1", LayerNorm(h, c.layer_norm_eps, o));
  mlp = register_module("mlp", std::make_shared<torch::nn::Module>());
  c_fc = Linear(h, 4 * h, true, o);
  c_proj = Linear(4 * h, h, true, o);
  mlp->register_module("c_fc", c_fc.ptr());
  mlp->register_module("c_proj", c_proj.ptr());
  ln_2 = register_module("ln_2", LayerNorm(h, c.layer_norm_eps, o));
}

Tensor ResidualAttentionImpl::forward(const Tensor& x) {
  auto qkv = kernels::linear(ln_1(x), in_proj_weight, in_proj_bias).chunk(3, -1);
  auto a = attention(split_heads(qkv[0], heads), split_heads(qkv[1], heads), split_heads(qkv[2], heads), {}, 0.0,
                     false);
  auto residual = x + out_proj(merge_heads(a));
  return residual + c_proj(kernels::quick_gelu(c_fc(ln_2(residual))));
}

VisionTransformerImpl::VisionTransformerImpl(const VisionConfig& c, const torch::TensorOptions& o) : cfg(c) {
  const int64_t h = c.hidden_size;
  auto emb = register_module("embeddings", std::make_shared<torch::nn::Module>());
  class_embedding = emb->register_parameter("class_embedding", torch::empty({h}, o));
  auto patch = emb->register_module("patch_embedding", std::make_shared<torch::nn::Module>());
  patch_weight = patch->register_parameter("weight", torch::empty({h, c.num_channels, c.patch_size, c.patch_size}, o));
  int64_t grid = c.image_size / c.patch_size;
  position_embedding = Embedding(grid * grid + 1, h, -1, o);
  emb->register_module("position_embedding", position_embedding.ptr());
  ln_pre = register_module("ln_pre", LayerNorm(h, c.layer_norm_eps, o));
  int n = c.num_hidden_layers - (c.remove_last_layer ? 1 : 0);
  for (int i = 0; i < n; ++i) resblocks.emplace_back(c, o);
  auto tr = register_module("transformer", std::make_shared<torch::nn::Module>());
  register_list(*tr, "resblocks", resblocks);
  ln_post = register_module("ln_post", LayerNorm(h, c.layer_norm_eps, o));
  if (!c.share_layernorm) {
    // Loaded and saved for checkpoint compatibility; BridgeTowerModel's forward never uses them (as in HF).
    std::vector<LayerNorm> sep;
    for (int i = 0; i < c.num_hidden_layers; ++i) sep.emplace_back(h, c.layer_norm_eps, o);
    register_list(*this, "ln_separate", sep);
  }
}

Tensor VisionTransformerImpl::embed(const Tensor& pixel_values) {
  if (pixel_values.dim() != 4 || pixel_values.size(1) != cfg.num_channels || pixel_values.size(2) != cfg.image_size ||
      pixel_values.size(3) != cfg.image_size)
    bt::fail("pixel_values has shape ", shape_str(pixel_values.sizes()), ", the model expects [B, ", cfg.num_channels, ", ",
             cfg.image_size, ", ", cfg.image_size, "]");
  auto p = kernels::patch_embedding(pixel_values.to(patch_weight.scalar_type()), patch_weight, cfg.patch_size);
  p = p.flatten(2).transpose(1, 2);  // [B, patches, H]
  auto cls = class_embedding.view({1, 1, -1}).expand({p.size(0), 1, -1}).to(p.scalar_type());
  auto e = torch::cat({cls, p}, 1) + position_embedding->weight.unsqueeze(0);
  return ln_pre(e);
}

// ---------------- text ----------------

TextEmbeddingsImpl::TextEmbeddingsImpl(const TextConfig& c, const torch::TensorOptions& o) : cfg(c) {
  word_embeddings = register_module("word_embeddings", Embedding(c.vocab_size, c.hidden_size, c.pad_token_id, o));
  position_embeddings =
      register_module("position_embeddings", Embedding(c.max_position_embeddings, c.hidden_size, c.pad_token_id, o));
  token_type_embeddings = register_module("token_type_embeddings", Embedding(c.type_vocab_size, c.hidden_size, -1, o));
  LayerNorm_ = register_module("LayerNorm", LayerNorm(c.hidden_size, c.layer_norm_eps, o));
}

Tensor TextEmbeddingsImpl::forward(const Tensor& ids) {
  if (ids.dim() != 2) bt::fail("input_ids must be [B, L], got ", shape_str(ids.sizes()));
  if (ids.size(1) > cfg.max_position_embeddings - cfg.pad_token_id - 1)
    bt::fail("input_ids has length ", ids.size(1), ", the model supports at most ",
             cfg.max_position_embeddings - cfg.pad_token_id - 1, " tokens");
  // RoBERTa positions: pad tokens keep padding_idx, real tokens count up from padding_idx + 1.
  auto real = ids.ne(cfg.pad_token_id).to(torch::kInt);
  auto pos = (torch::cumsum(real, 1).to(torch::kInt) * real).to(torch::kLong) + cfg.pad_token_id;
  auto tt = torch::zeros_like(ids);
  auto e = word_embeddings(ids) + token_type_embeddings(tt) + position_embeddings(pos);
  e = LayerNorm_(e);
  return kernels::dropout(e, cfg.hidden_dropout_prob, is_training());
}

AttentionImpl::AttentionImpl(const TextConfig& c, const torch::TensorOptions& o)
    : heads(c.num_attention_heads),
      attn_dropout(c.attention_probs_dropout_prob),
      hidden_dropout(c.hidden_dropout_prob) {
  const int64_t h = c.hidden_size;
  auto self = register_module("self", std::make_shared<torch::nn::Module>());
  query = Linear(h, h, true, o);
  key = Linear(h, h, true, o);
  value = Linear(h, h, true, o);
  self->register_module("query", query.ptr());
  self->register_module("key", key.ptr());
  self->register_module("value", value.ptr());
  auto out = register_module("output", std::make_shared<torch::nn::Module>());
  dense = Linear(h, h, true, o);
  LayerNorm_ = LayerNorm(h, c.layer_norm_eps, o);
  out->register_module("dense", dense.ptr());
  out->register_module("LayerNorm", LayerNorm_.ptr());
}

Tensor AttentionImpl::forward(const Tensor& x, const Tensor& mask, const Tensor& enc, const Tensor& enc_mask) {
  const Tensor& src = enc.defined() ? enc : x;
  auto ctx = attention(split_heads(query(x), heads), split_heads(key(src), heads), split_heads(value(src), heads),
                       enc.defined() ? enc_mask : mask, attn_dropout, is_training());
  auto h = kernels::dropout(dense(merge_heads(ctx)), hidden_dropout, is_training());
  return LayerNorm_(h + x);
}

FeedForward::FeedForward(const TextConfig& c, const torch::TensorOptions& o, torch::nn::Module& m)
    : owner(&m), hidden_dropout(c.hidden_dropout_prob) {
  inter = Linear(c.hidden_size, c.intermediate_size, true, o);
  out = Linear(c.intermediate_size, c.hidden_size, true, o);
  LayerNorm_ = LayerNorm(c.hidden_size, c.layer_norm_eps, o);
  m.register_module("intermediate", std::make_shared<torch::nn::Module>())->register_module("dense", inter.ptr());
  auto o2 = m.register_module("output", std::make_shared<torch::nn::Module>());
  o2->register_module("dense", out.ptr());
  o2->register_module("LayerNorm", LayerNorm_.ptr());
}

Tensor FeedForward::forward(const Tensor& x) {
  auto h = kernels::dropout(out(torch::gelu(inter(x))), hidden_dropout, owner->is_training());
  return LayerNorm_(h + x);
}

TextLayerImpl::TextLayerImpl(const TextConfig& c, const torch::TensorOptions& o) {
  attention = register_module("attention", Attention(c, o));
  ffn = std::make_unique<FeedForward>(c, o, *this);
}
Tensor TextLayerImpl::forward(const Tensor& x, const Tensor& mask) { return ffn->forward(attention(x, mask)); }

CrossLayerImpl::CrossLayerImpl(const TextConfig& c, const torch::TensorOptions& o) {
  attention = register_module("attention", Attention(c, o));
  crossattention = register_module("crossattention", Attention(c, o));
  ffn = std::make_unique<FeedForward>(c, o, *this);
}
Tensor CrossLayerImpl::forward(const Tensor& x, const Tensor& enc, const Tensor& mask, const Tensor& enc_mask) {
  auto a = attention(x, mask);
  return ffn->forward(crossattention(a, mask, enc, enc_mask));
}

PoolerImpl::PoolerImpl(int64_t hidden, const torch::TensorOptions& o) {
  dense = register_module("dense", Linear(hidden, hidden, true, o));
}
Tensor PoolerImpl::forward(const Tensor& x) { return torch::tanh(dense(x.select(1, 0))); }

LinkTowerImpl::LinkTowerImpl(const BridgeTowerConfig& c, const torch::TensorOptions& o) : type(c.link_tower_type) {
  if (type == "scaled_add") scaled_factor = register_parameter("scaled_factor", torch::empty({}, o));
  if (type == "interpolate") beta = register_parameter("beta", torch::empty({}, o));
  LayerNorm_ = register_module("LayerNorm", LayerNorm(c.hidden_size, c.layer_norm_eps, o));
}
Tensor LinkTowerImpl::forward(const Tensor& uni, const Tensor& cross) {
  if (type == "scaled_add") return LayerNorm_(uni * scaled_factor + cross);
  if (type == "interpolate") return LayerNorm_(uni * (1 - beta) + cross * beta);
  return LayerNorm_(uni + cross);
}

TextModelImpl::TextModelImpl(const TextConfig& c, const torch::TensorOptions& o) {
  embeddings = register_module("embeddings", TextEmbeddings(c, o));
  for (int i = 0; i < c.num_hidden_layers; ++i) layers.emplace_back(c, o);
  auto enc = register_module("encoder", std::make_shared<torch::nn::Module>());
  register_list(*enc, "layer", layers);
  pooler = register_module("pooler", Pooler(c.hidden_size, o));
}

}  // namespace bt::model
