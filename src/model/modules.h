// Building blocks of BridgeTower (internal to bt_model). Every module registers its parameters under the
// Hugging Face names, so named_parameters() of the assembled model equals HF's state_dict() keys. Parameters
// are created with the TensorOptions passed in: on the meta device nothing is allocated (parameter counts of
// the large shapes), and random init is done afterwards by init_weights() (weights.cpp).
// Sequences are batch-first everywhere ([B, L, H]); HF's vision tower runs seq-first, which is the same math.
#pragma once
#include <torch/torch.h>

#include "model/config.h"

namespace bt::model {

using torch::Tensor;

// "[2, 3]". Also keeps c10 types out of bt::fail: an unqualified str() in common/error.h is ambiguous with
// c10::str under ADL.
inline std::string shape_str(c10::IntArrayRef s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

struct LinearImpl : torch::nn::Module {
  LinearImpl(int64_t in, int64_t out, bool bias, const torch::TensorOptions& o);
  // x W^T + b, plus lora_scaling * dropout(x) A^T B^T when a LoRA adapter is attached (model/lora.h).
  Tensor forward(const Tensor& x);
  Tensor weight, bias;
  Tensor lora_A, lora_B;  // [r, in], [out, r]: registered as "lora_A.weight" / "lora_B.weight" (PEFT's names)
  double lora_scaling = 0, lora_dropout = 0;
};
TORCH_MODULE(Linear);

struct LayerNormImpl : torch::nn::Module {
  LayerNormImpl(int64_t n, double eps, const torch::TensorOptions& o);
  Tensor forward(const Tensor& x);
  Tensor weight, bias;
  double eps;
};
TORCH_MODULE(LayerNorm);

// nn.Embedding: the padding_idx row gets no gradient (it is not zeroed: HF's init overwrites it).
struct EmbeddingImpl : torch::nn::Module {
  EmbeddingImpl(int64_t n, int64_t dim, int64_t padding_idx, const torch::TensorOptions& o);
  Tensor forward(const Tensor& ids);
  Tensor weight;
  int64_t padding_idx;
};
TORCH_MODULE(Embedding);

// softmax(q k^T / sqrt(d) + mask) v over [B, heads, L, d]; `mask` is additive, broadcastable, or undefined.
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double dropout, bool train);
// [B, L] 0/1 mask -> [B, 1, 1, L] additive mask: 0 for real tokens, the dtype's lowest value for padding.
Tensor extended_attention_mask(const Tensor& mask01, torch::ScalarType dtype);

// ---- CLIP vision tower ----
struct ResidualAttentionImpl : torch::nn::Module {  // "resblocks.<i>"
  ResidualAttentionImpl(const VisionConfig& c, const torch::TensorOptions& o);
  Tensor forward(const Tensor& x);  // [B, L, H], unmasked
  int64_t heads;
  Tensor in_proj_weight, in_proj_bias;  // registered on the "attn" child
  std::shared_ptr<torch::nn::Module> attn, mlp;
  Linear out_proj{nullptr}, c_fc{nullptr}, c_proj{nullptr};
  LayerNorm ln_1{nullptr}, ln_2{nullptr};
};
TORCH_MODULE(ResidualAttention);

struct VisionTransformerImpl : torch::nn::Module {  // "vision_model.visual"
  VisionTransformerImpl(const VisionConfig& c, const torch::TensorOptions& o);
  Tensor embed(const Tensor& pixel_values);  // patch + class + position embeddings, then ln_pre
  Tensor post(const Tensor& x) { return ln_post(x); }
  VisionConfig cfg;
  Tensor class_embedding, patch_weight;
  Embedding position_embedding{nullptr};
  LayerNorm ln_pre{nullptr}, ln_post{nullptr};
  std::vector<ResidualAttention> resblocks;
};
TORCH_MODULE(VisionTransformer);

// ---- RoBERTa text tower and BERT-style layers ----
struct TextEmbeddingsImpl : torch::nn::Module {
  TextEmbeddingsImpl(const TextConfig& c, const torch::TensorOptions& o);
  Tensor forward(const Tensor& input_ids);
  TextConfig cfg;
  Embedding word_embeddings{nullptr}, position_embeddings{nullptr}, token_type_embeddings{nullptr};
  LayerNorm LayerNorm_{nullptr};
};
TORCH_MODULE(TextEmbeddings);

// BridgeTowerAttention: "self" (query/key/value) + "output" (dense, LayerNorm, residual).
struct AttentionImpl : torch::nn::Module {
  AttentionImpl(const TextConfig& c, const torch::TensorOptions& o);
  // Self-attention when `enc` is undefined, else cross-attention onto `enc` with `enc_mask`.
  Tensor forward(const Tensor& x, const Tensor& mask, const Tensor& enc = {}, const Tensor& enc_mask = {});
  int64_t heads;
  double attn_dropout, hidden_dropout;
  Linear query{nullptr}, key{nullptr}, value{nullptr}, dense{nullptr};
  LayerNorm LayerNorm_{nullptr};
};
TORCH_MODULE(Attention);

// intermediate.dense -> GELU -> output.dense -> dropout -> output.LayerNorm(+ residual)
// Not a module of its own: its parameters live on the owning layer, as in HF.
struct FeedForward {
  FeedForward(const TextConfig& c, const torch::TensorOptions& o, torch::nn::Module& owner);
  Tensor forward(const Tensor& x);
  torch::nn::Module* owner;
  double hidden_dropout;
  Linear inter{nullptr}, out{nullptr};
  LayerNorm LayerNorm_{nullptr};
};

struct TextLayerImpl : torch::nn::Module {  // "encoder.layer.<i>"
  TextLayerImpl(const TextConfig& c, const torch::TensorOptions& o);
  Tensor forward(const Tensor& x, const Tensor& mask);
  Attention attention{nullptr};
  std::unique_ptr<FeedForward> ffn;
};
TORCH_MODULE(TextLayer);

struct CrossLayerImpl : torch::nn::Module {  // "cross_modal_{text,image}_layers.<i>"
  CrossLayerImpl(const TextConfig& c, const torch::TensorOptions& o);
  Tensor forward(const Tensor& x, const Tensor& enc, const Tensor& mask, const Tensor& enc_mask);
  Attention attention{nullptr}, crossattention{nullptr};
  std::unique_ptr<FeedForward> ffn;
};
TORCH_MODULE(CrossLayer);

struct PoolerImpl : torch::nn::Module {  // dense + tanh on the first token
  PoolerImpl(int64_t hidden, const torch::TensorOptions& o);
  Tensor forward(const Tensor& x);
  Linear dense{nullptr};
};
TORCH_MODULE(Pooler);

struct LinkTowerImpl : torch::nn::Module {
  LinkTowerImpl(const BridgeTowerConfig& c, const torch::TensorOptions& o);
  Tensor forward(const Tensor& uni, const Tensor& cross);
  std::string type;
  Tensor scaled_factor, beta;
  LayerNorm LayerNorm_{nullptr};
};
TORCH_MODULE(LinkTower);

struct TextModelImpl : torch::nn::Module {  // "text_model"
  TextModelImpl(const TextConfig& c, const torch::TensorOptions& o);
  TextEmbeddings embeddings{nullptr};
  std::vector<TextLayer> layers;
  Pooler pooler{nullptr};
};
TORCH_MODULE(TextModel);

// Registers `children` under `parent` as "<name>.0", "<name>.1", ... (nn.ModuleList naming).
template <class M>
void register_list(torch::nn::Module& parent, const std::string& name, std::vector<M>& children) {
  auto list = parent.register_module(name, std::make_shared<torch::nn::Module>());
  for (size_t i = 0; i < children.size(); ++i) list->register_module(std::to_string(i), children[i].ptr());
}

}  // namespace bt::model
