// BridgeTower configuration, as Hugging Face's config.json of model_type "bridgetower" (nested text_config /
// vision_config; missing fields take HF's defaults). Torch-free. to_json() writes the HF layout back, keeping
// any fields this struct does not model (e.g. architectures, torch_dtype) from the file it was read from.
// `image` is the model folder's other half, preprocessor_config.json's normalisation (model/preprocessor.h).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "model/preprocessor.h"

namespace bt::model {

struct TextConfig {
  int vocab_size = 50265;
  int hidden_size = 768;
  int num_hidden_layers = 12;
  int num_attention_heads = 12;
  int intermediate_size = 3072;
  std::string hidden_act = "gelu";
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  int max_position_embeddings = 514;
  int type_vocab_size = 1;
  double layer_norm_eps = 1e-5;
  int pad_token_id = 1;
  int bos_token_id = 0;
  int eos_token_id = 2;
  double initializer_factor = 1;
};

struct VisionConfig {
  int hidden_size = 768;
  int num_hidden_layers = 12;
  int num_channels = 3;
  int patch_size = 16;
  int image_size = 288;
  double layer_norm_eps = 1e-5;
  double initializer_factor = 1;
  bool stop_gradient = false;
  bool share_layernorm = true;
  bool remove_last_layer = false;
};

struct BridgeTowerConfig {
  TextConfig text;
  VisionConfig vision;
  int hidden_size = 768;
  int num_attention_heads = 12;
  int num_hidden_layers = 6;  // cross-modal layers
  std::string hidden_act = "gelu";
  double layer_norm_eps = 1e-5;
  double initializer_factor = 1;
  bool share_cross_modal_transformer_layers = true;
  bool share_link_tower_layers = false;
  std::string link_tower_type = "add";  // add | scaled_add | interpolate
  bool init_layernorm_from_vision_encoder = false;
  bool tie_word_embeddings = false;
  int contrastive_hidden_size = 512;
  double logit_scale_init_value = 2.6592;
  nlohmann::json extra = nlohmann::json::object();  // unmodelled fields, written back verbatim
  std::string source;  // the file it was read from, for messages ("" for presets); not written back
  // The pixel normalisation the model takes: from preprocessor_config.json (load_pretrained_config), CLIP's for
  // presets; not part of config.json (save_pretrained writes it to preprocessor_config.json).
  ImageNormalization image;

  // Checks the invariants the model relies on and upper bounds on every size (so a hostile config.json
  // cannot ask for an unbounded allocation); throws bt::Error naming `what` and the field.
  void validate(const std::string& what) const;
  // Roughly how many parameters the model has (validate() caps it).
  double estimated_parameters() const;
  nlohmann::json to_json() const;
  nlohmann::json sub_extra(const char* key) const;  // the unmodelled fields of text_config/vision_config
};

BridgeTowerConfig config_from_json(const nlohmann::json& j, const std::string& what);
BridgeTowerConfig load_config(const std::string& path);
// A model folder's dir/config.json, with `image` from dir/preprocessor_config.json (image_normalization_of).
BridgeTowerConfig load_pretrained_config(const std::string& dir);
// Written atomically.
void save_config(const BridgeTowerConfig& c, const std::string& path);

// The tokens one caption may hold, <s> and </s> included: the text position embeddings less RoBERTa's offset
// (positions start after the padding id).
int max_text_tokens(const TextConfig& t);
// --max_seq_length as a command uses it with this model: the flag's value when given (a value past
// max_text_tokens is refused naming the flag and the model's limit, before anything runs), else the default
// (defaults::kMaxSeqLength) capped to what the model holds.
int resolve_max_seq_length(const std::optional<int>& given, const TextConfig& t);
// Refuses a tokenizer of `ids` ids (`named`: how the error names it, e.g. "--tokenizer_name DIR") for text
// embeddings of fewer rows: an id past the table cannot be embedded (libtorch's "index out of range", a CUDA assert).
void check_vocab_fits(size_t ids, const TextConfig& t, const std::string& named);

// tiny (tests/demo) | small (compute-bound on 2 CPU cores) | base (BridgeTower/bridgetower-base) |
// large (BridgeTower/bridgetower-large-itm-mlm-itc). Throws bt::Error for other names.
BridgeTowerConfig preset(const std::string& name);

}  // namespace bt::model
