// BridgeTower on libtorch with Hugging Face semantics and parameter names.
//   BridgeTowerForContrastiveLearning  (the trainer's model; HF class of the same name)
//   BridgeTowerForImageAndTextRetrieval (ITM head), BridgeTowerForMaskedLM (MLM head)
// Construct from a config (random init as HF's _init_weights; pass the meta device to only count parameters),
// or load_pretrained(dir) with config.json + model.safetensors (or a sharded index). save_pretrained(dir)
// writes both atomically in a layout HF's from_pretrained accepts. Inputs: pixel_values F32 [B,3,S,S],
// input_ids I64 [B,L], attention_mask I64 [B,L] (1 = real token). eval()/train() switch dropout.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "model/api.h"
#include "model/config.h"
#include "model/grad_checkpoint.h"
#include "model/lora_config.h"
#include "model/memory_budget.h"
#include "model/modules.h"

namespace bt::checkpoint {
struct TensorView;
}

namespace bt::model {

// Optional per-layer intermediates (batch-first), filled by forward when requested; for tests and debugging.
struct Intermediates {
  std::vector<Tensor> hidden_text, hidden_image, cross_text, cross_image;
  Tensor pooler_output;
};

struct BridgeTowerOutput {
  Tensor text_features, image_features, pooler_output;  // cross-modal outputs, pooler = [B, 2H]
  Tensor text_last, image_last;                          // last uni-modal tower states (image before ln_post)
};

// HF BridgeTowerModel ("bridgetower." in the head models).
struct BridgeTowerModelImpl : torch::nn::Module {
  BridgeTowerModelImpl(const BridgeTowerConfig& c, const torch::TensorOptions& o);
  BridgeTowerOutput forward(const Tensor& pixel_values, const Tensor& input_ids, const Tensor& attention_mask,
                            Intermediates* dbg = nullptr);
  Tensor image_token_type() { return token_type_embeddings->weight[1]; }
  BridgeTowerConfig cfg;
  // HF's gradient_checkpointing_enable(): each text layer, vision block and cross-modal step (link towers and
  // both cross layers) keeps only its inputs and recomputes in backward (model/grad_checkpoint.h).
  bool gradient_checkpointing = false;
  Linear cross_modal_text_transform{nullptr}, cross_modal_image_transform{nullptr};
  Embedding token_type_embeddings{nullptr};
  VisionTransformer visual{nullptr};
  TextModel text_model{nullptr};
  std::vector<CrossLayer> cross_image_layers, cross_text_layers;
  Pooler cross_modal_image_pooler{nullptr}, cross_modal_text_pooler{nullptr};
  LayerNorm cross_modal_text_layernorm{nullptr}, cross_modal_image_layernorm{nullptr};
  std::vector<LinkTower> text_links, image_links;  // one each when share_link_tower_layers

 private:
  Segment first_cross_step(const Tensor& text_mask);      // (text, image) -> (cross text, cross image)
  Segment cross_step(size_t j, const Tensor& text_mask);  // (text, image, cross text, cross image) -> the next
};
TORCH_MODULE(BridgeTowerModel);

struct ContrastiveOutput {
  Tensor text_embeds, image_embeds, cross_embeds;  // [B, contrastive_hidden_size], L2-normalised
  Tensor logits;                                    // [B, 3, contrastive_hidden_size]
  Tensor loss;                                      // scalar; undefined unless return_loss
};

// Common to the head models: config, checkpoint I/O, parameter bookkeeping (weights.cpp).
class PretrainedModel : public torch::nn::Module {
 public:
  const BridgeTowerConfig& config() const { return cfg_; }
  virtual std::string architecture() const = 0;
  // Copies tensors into the parameters by HF name, from the first of dir/model.safetensors, its sharded index,
  // pytorch_model.bin, its sharded index (HF's order), converting F16/BF16/F64 to the parameter dtype. Missing
  // or mis-shaped tensors -> bt::Error naming the key and shapes; when allow_missing_heads, head tensors (not
  // under "bridgetower.") may be absent and keep their init. As from_pretrained: checkpoint tensors this model
  // has no place for (other heads, position_ids) are skipped; skipped and missing heads are each named in one
  // line on stderr.
  // check_only: every check above, nothing copied or printed (on a meta-device model: check_checkpoint_fits).
  void load_weights(const std::string& dir, bool allow_missing_heads = false, bool check_only = false);
  // config.json (architectures = this class) + model.safetensors (F32, every parameter) +
  // preprocessor_config.json (the vision image_size and config().image's mean/std), all atomic. With LoRA
  // adapters attached (model/lora.h), model.safetensors holds the base weights and the adapters go to PEFT's
  // adapter_config.json + adapter_model.safetensors beside it; load_weights reads them back into the adapters.
  void save_pretrained(const std::string& dir);
  int64_t count_parameters(bool trainable_only = false) const;
  // HF _init_weights, then the head-specific constants (logit_scale, link-tower scalars).
  void init_weights();
  // The adapters attached by add_lora() (rank 0: none).
  LoraSpec lora;

 protected:
  explicit PretrainedModel(BridgeTowerConfig c) : cfg_(std::move(c)) {}
  BridgeTowerConfig cfg_;
};

class BridgeTowerForContrastiveLearningImpl : public PretrainedModel {
 public:
  explicit BridgeTowerForContrastiveLearningImpl(const BridgeTowerConfig& c,
                                                 const torch::TensorOptions& o = torch::TensorOptions());
  std::string architecture() const override { return "BridgeTowerForContrastiveLearning"; }
  ContrastiveOutput forward(const Tensor& pixel_values, const Tensor& input_ids, const Tensor& attention_mask,
                            bool return_loss = true, Intermediates* dbg = nullptr);
  // The uni-modal halves of forward(): its text_embeds from the text alone and its image_embeds from the image
  // alone (neither tower sees the other modality), so evaluation encodes each distinct text and image once.
  Tensor encode_text(const Tensor& input_ids, const Tensor& attention_mask);
  Tensor encode_image(const Tensor& pixel_values);
  BridgeTowerModel bridgetower{nullptr};
  Linear itc_text_head{nullptr}, itc_image_head{nullptr}, itc_cross_modal_head{nullptr};
  Tensor logit_scale;
};
TORCH_MODULE(BridgeTowerForContrastiveLearning);

struct ClassifierOutput {
  Tensor logits, loss;  // loss only when labels were given
};

class BridgeTowerForImageAndTextRetrievalImpl : public PretrainedModel {
 public:
  explicit BridgeTowerForImageAndTextRetrievalImpl(const BridgeTowerConfig& c,
                                                   const torch::TensorOptions& o = torch::TensorOptions());
  std::string architecture() const override { return "BridgeTowerForImageAndTextRetrieval"; }
  // logits [B, 2]; labels I64 [B] (1 = match) optional.
  ClassifierOutput forward(const Tensor& pixel_values, const Tensor& input_ids, const Tensor& attention_mask,
                           const Tensor& labels = {});
  BridgeTowerModel bridgetower{nullptr};
  Linear itm_fc{nullptr};
};
TORCH_MODULE(BridgeTowerForImageAndTextRetrieval);

class BridgeTowerForMaskedLMImpl : public PretrainedModel {
 public:
  explicit BridgeTowerForMaskedLMImpl(const BridgeTowerConfig& c,
                                      const torch::TensorOptions& o = torch::TensorOptions());
  std::string architecture() const override { return "BridgeTowerForMaskedLM"; }
  // logits [B, L, vocab]; labels I64 [B, L] with -100 = ignored, optional.
  ClassifierOutput forward(const Tensor& pixel_values, const Tensor& input_ids, const Tensor& attention_mask,
                           const Tensor& labels = {});
  BridgeTowerModel bridgetower{nullptr};
  Linear transform_dense{nullptr}, decoder{nullptr};
  LayerNorm transform_ln{nullptr};
  Tensor bias;
};
TORCH_MODULE(BridgeTowerForMaskedLM);

// Throws, as load_weights() would, unless dir's checkpoint fills the model of config `c` (names, shapes, dtypes),
// without allocating it (the model is built on the meta device): a config.json describing a larger model than its
// checkpoint holds is refused before the model takes its memory.
void check_checkpoint_fits(const BridgeTowerConfig& c, const std::string& dir, bool allow_missing_heads);

// Reads dir/config.json (and preprocessor_config.json: load_pretrained_config), checks the model's memory
// (model/memory_budget.h) and that the checkpoint fits it, then builds the model and loads its weights. Heads
// absent from the checkpoint (e.g. a plain BridgeTowerModel checkpoint) keep their random init when
// allow_missing_heads.
BridgeTowerForContrastiveLearning load_contrastive(const std::string& dir, const ModelBudget& budget = {},
                                                   bool allow_missing_heads = false);

// AdamW parameter groups, HF Trainer style: biases and LayerNorm weights get no weight decay.
struct ParamGroups {
  std::vector<Tensor> decay, no_decay;
  std::vector<std::string> decay_names, no_decay_names;
};
ParamGroups adamw_param_groups(torch::nn::Module& model);  // only parameters with requires_grad
// Name prefixes for freezing (requires_grad = false) a tower.
inline constexpr const char* kVisionTowerPrefix = "bridgetower.vision_model.";
inline constexpr const char* kTextTowerPrefix = "bridgetower.text_model.";
inline constexpr const char* kTextPoolerPrefix = "bridgetower.text_model.pooler.";
// Returns the number of parameter tensors frozen.
int freeze_parameters(torch::nn::Module& model, const std::string& name_prefix);

// Tensor <-> safetensors helpers for batch files (CPU, contiguous copies).
std::map<std::string, Tensor> load_tensors(const std::string& path);
// p <- a mapped safetensors tensor of p's shape, its dtype converted, read in place (no copy of the file).
void copy_from_view(Tensor& p, const checkpoint::TensorView& t);
void save_tensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors);

}  // namespace bt::model
