#include "model/config.h"

#include <algorithm>
#include <climits>
#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/defaults.h"
#include "common/error.h"
#include "common/file_gate.h"
#include "common/json.h"

namespace bt::model {

namespace {

// Reads j[key] into *v when present; a present value of the wrong type is an error.
template <class T>
void take(nlohmann::json& j, const char* key, T* v, const std::string& what) {
  auto it = j.find(key);
  if (it == j.end()) return;
  try {
    if (it->is_null()) {
      j.erase(it);
      return;
    }
    if constexpr (std::is_same_v<T, int>) {
      if (!it->is_number_integer()) throw std::runtime_error("");
      // get<int>() would wrap 4294967300 to 4: check the range on the 64-bit value first.
      const bool in_range = it->is_number_unsigned() ? it->get<uint64_t>() <= uint64_t(INT_MAX)
                                                     : it->get<int64_t>() >= INT_MIN && it->get<int64_t>() <= INT_MAX;
      if (!in_range) bt::fail(what, ": field \"", key, "\" is out of range (", it->dump(), ")");
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!it->is_boolean()) throw std::runtime_error("");
    } else if constexpr (std::is_same_v<T, double>) {
      if (!it->is_number()) throw std::runtime_error("");
    }
    *v = it->get<T>();
  } catch (const bt::Error&) {
    throw;
  } catch (const std::exception&) {
    bt::fail(what, ": field \"", key, "\" has the wrong type (", it->dump(), ")");
  }
  j.erase(it);
}

}  // namespace

BridgeTowerConfig config_from_json(const nlohmann::json& in, const std::string& what) {
  if (!in.is_object()) bt::fail(what, ": config is not a JSON object");
  nlohmann::json j = in;
  BridgeTowerConfig c;
  std::string model_type = "bridgetower";
  take(j, "model_type", &model_type, what);
  if (model_type != "bridgetower")
    bt::fail(what, ": model_type is \"", model_type, "\", expected \"bridgetower\"");
  take(j, "hidden_size", &c.hidden_size, what);
  take(j, "num_attention_heads", &c.num_attention_heads, what);
  take(j, "num_hidden_layers", &c.num_hidden_layers, what);
  take(j, "hidden_act", &c.hidden_act, what);
  take(j, "layer_norm_eps", &c.layer_norm_eps, what);
  take(j, "initializer_factor", &c.initializer_factor, what);
  take(j, "share_cross_modal_transformer_layers", &c.share_cross_modal_transformer_layers, what);
  take(j, "share_link_tower_layers", &c.share_link_tower_layers, what);
  take(j, "link_tower_type", &c.link_tower_type, what);
  take(j, "init_layernorm_from_vision_encoder", &c.init_layernorm_from_vision_encoder, what);
  take(j, "tie_word_embeddings", &c.tie_word_embeddings, what);
  take(j, "contrastive_hidden_size", &c.contrastive_hidden_size, what);
  take(j, "logit_scale_init_value", &c.logit_scale_init_value, what);
  for (const char* sub : {"text_config", "vision_config"}) {
    auto it = j.find(sub);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_object()) bt::fail(what, ": \"", sub, "\" is not an object");
    nlohmann::json s = *it;
    std::string w = what + " " + sub;
    if (std::string(sub) == "text_config") {
      auto& t = c.text;
      take(s, "vocab_size", &t.vocab_size, w);
      take(s, "hidden_size", &t.hidden_size, w);
      take(s, "num_hidden_layers", &t.num_hidden_layers, w);
      take(s, "num_attention_heads", &t.num_attention_heads, w);
      take(s, "intermediate_size", &t.intermediate_size, w);
      take(s, "hidden_act", &t.hidden_act, w);
      take(s, "hidden_dropout_prob", &t.hidden_dropout_prob, w);
      take(s, "attention_probs_dropout_prob", &t.attention_probs_dropout_prob, w);
      take(s, "max_position_embeddings", &t.max_position_embeddings, w);
      take(s, "type_vocab_size", &t.type_vocab_size, w);
      take(s, "layer_norm_eps", &t.layer_norm_eps, w);
      take(s, "pad_token_id", &t.pad_token_id, w);
      take(s, "bos_token_id", &t.bos_token_id, w);
      take(s, "eos_token_id", &t.eos_token_id, w);
      take(s, "initializer_factor", &t.initializer_factor, w);
    } else {
      auto& v = c.vision;
      take(s, "hidden_size", &v.hidden_size, w);
      take(s, "num_hidden_layers", &v.num_hidden_layers, w);
      take(s, "num_channels", &v.num_channels, w);
      take(s, "patch_size", &v.patch_size, w);
      take(s, "image_size", &v.image_size, w);
      take(s, "layer_norm_eps", &v.layer_norm_eps, w);
      take(s, "initializer_factor", &v.initializer_factor, w);
      take(s, "stop_gradient", &v.stop_gradient, w);
      take(s, "share_layernorm", &v.share_layernorm, w);
      take(s, "remove_last_layer", &v.remove_last_layer, w);
    }
    s.erase("model_type");
    c.extra[std::string("__") + sub] = s;  // unmodelled sub-config fields
    j.erase(sub);
  }
  // "__" keys are this struct's own (the unmodelled sub-config fields above): a file's are dropped, never let in
  // to replace them (a "__text_config" array in the file broke to_json).
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key().rfind("__", 0) != 0) c.extra[it.key()] = it.value();
  c.source = what;
  c.validate(what);
  return c;
}

// Upper bounds far above any released BridgeTower (large: hidden 1024, 24 layers, 4096 intermediate, 50265
// tokens) but low enough that a hostile config.json cannot ask for an unbounded allocation.
constexpr int kMaxWidth = 16384, kMaxLayers = 256, kMaxVocab = 1 << 20, kMaxPositions = 1 << 16, kMaxImage = 8192;
constexpr double kMaxParameters = 4e9;  // 16 GB of float32 weights

double BridgeTowerConfig::estimated_parameters() const {
  const double h = hidden_size, th = text.hidden_size, ti = text.intermediate_size, vh = vision.hidden_size;
  const double patches = double(vision.image_size / std::max(1, vision.patch_size));
  const double text_p = (double(text.vocab_size) + text.max_position_embeddings + text.type_vocab_size) * th +
                        text.num_hidden_layers * (4 * th * th + 2 * th * ti);
  const double vision_p = vision.num_hidden_layers * 12 * vh * vh +
                          (patches * patches + 1 + double(vision.num_channels) * vision.patch_size * vision.patch_size) * vh;
  const double cross_p = 2.0 * num_hidden_layers * (8 * h * h + 2 * h * ti) + 4 * h * contrastive_hidden_size;
  return text_p + vision_p + cross_p;
}

void BridgeTowerConfig::validate(const std::string& what) const {
  auto need = [&](bool ok, const char* field, const auto& why) {
    if (!ok) bt::fail(what, ": ", field, " ", why);
  };
  auto range = [&](int v, int lo, int hi, const char* field) {
    if (v < lo || v > hi) bt::fail(what, ": ", field, " is ", v, ", outside ", lo, "..", hi);
  };
  range(hidden_size, 1, kMaxWidth, "hidden_size");
  range(num_hidden_layers, 1, kMaxLayers, "num_hidden_layers");
  range(contrastive_hidden_size, 1, kMaxWidth, "contrastive_hidden_size");
  range(text.vocab_size, 1, kMaxVocab, "text_config.vocab_size");
  range(text.hidden_size, 1, kMaxWidth, "text_config.hidden_size");
  range(text.num_hidden_layers, 1, kMaxLayers, "text_config.num_hidden_layers");
  range(text.intermediate_size, 1, 4 * kMaxWidth, "text_config.intermediate_size");
  range(text.max_position_embeddings, 1, kMaxPositions, "text_config.max_position_embeddings");
  range(text.type_vocab_size, 1, 1024, "text_config.type_vocab_size");
  range(vision.hidden_size, 1, kMaxWidth, "vision_config.hidden_size");
  range(vision.num_hidden_layers, 1, kMaxLayers, "vision_config.num_hidden_layers");
  range(vision.num_channels, 1, 16, "vision_config.num_channels");
  range(vision.image_size, 1, kMaxImage, "vision_config.image_size");
  for (double eps : {layer_norm_eps, text.layer_norm_eps, vision.layer_norm_eps})
    need(eps > 0 && eps < 1, "layer_norm_eps", "must be in (0, 1)");
  for (double p : {text.hidden_dropout_prob, text.attention_probs_dropout_prob})
    need(p >= 0 && p < 1, "text_config dropout", "must be in [0, 1)");
  const double params = estimated_parameters();
  if (params > kMaxParameters)
    bt::fail(what, ": the sizes ask for ", params, " parameters, more than the limit of ", kMaxParameters,
             " (check hidden_size, intermediate_size, vocab_size and the layer counts)");
  need(hidden_size > 0 && num_attention_heads > 0 && hidden_size % num_attention_heads == 0, "hidden_size",
       "must be a positive multiple of num_attention_heads");
  need(text.hidden_size > 0 && text.num_attention_heads > 0 && text.hidden_size % text.num_attention_heads == 0,
       "text_config.hidden_size", "must be a positive multiple of text_config.num_attention_heads");
  need(text.hidden_size == hidden_size, "text_config.hidden_size",
       "must equal hidden_size (the cross-modal layers are built from text_config)");
  need(vision.hidden_size >= 64 && vision.hidden_size % 64 == 0, "vision_config.hidden_size",
       "must be a positive multiple of 64 (one vision head per 64 channels)");
  need(vision.patch_size > 0 && vision.image_size >= vision.patch_size, "vision_config.patch_size",
       "must be positive and not larger than image_size");
  need(num_hidden_layers >= 1, "num_hidden_layers", "must be >= 1");
  need(text.num_hidden_layers >= num_hidden_layers, "text_config.num_hidden_layers",
       "must be >= num_hidden_layers (the cross-modal layers bridge the top text layers)");
  int vis_layers = vision.num_hidden_layers - (vision.remove_last_layer ? 1 : 0);
  need(vis_layers >= text.num_hidden_layers, "vision_config.num_hidden_layers",
       "must provide at least text_config.num_hidden_layers vision blocks");
  need(link_tower_type == "add" || link_tower_type == "scaled_add" || link_tower_type == "interpolate",
       "link_tower_type", "must be add, scaled_add or interpolate");
  need(share_cross_modal_transformer_layers, "share_cross_modal_transformer_layers",
       "=false is not supported (the reference implementation cannot run it either)");
  need(text.hidden_act == "gelu" && hidden_act == "gelu", "hidden_act", "must be \"gelu\"");
  need(text.vocab_size > 0 && text.max_position_embeddings > text.pad_token_id + 1 && text.pad_token_id >= 0 &&
           text.pad_token_id < text.vocab_size,
       "text_config", "needs vocab_size > pad_token_id >= 0 and max_position_embeddings > pad_token_id + 1");
  need(text.type_vocab_size >= 1, "text_config.type_vocab_size", "must be >= 1");
  need(contrastive_hidden_size > 0, "contrastive_hidden_size", "must be > 0");
}

nlohmann::json BridgeTowerConfig::sub_extra(const char* key) const {
  auto it = extra.find(key);
  return it != extra.end() && it->is_object() ? *it : nlohmann::json::object();
}

nlohmann::json BridgeTowerConfig::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (auto it = extra.begin(); it != extra.end(); ++it)
    if (it.key().rfind("__", 0) != 0) j[it.key()] = it.value();
  if (!j.contains("architectures")) j["architectures"] = {"BridgeTowerForContrastiveLearning"};
  j["model_type"] = "bridgetower";
  j["hidden_size"] = hidden_size;
  j["num_attention_heads"] = num_attention_heads;
  j["num_hidden_layers"] = num_hidden_layers;
  j["hidden_act"] = hidden_act;
  j["layer_norm_eps"] = layer_norm_eps;
  j["initializer_factor"] = initializer_factor;
  j["share_cross_modal_transformer_layers"] = share_cross_modal_transformer_layers;
  j["share_link_tower_layers"] = share_link_tower_layers;
  j["link_tower_type"] = link_tower_type;
  j["init_layernorm_from_vision_encoder"] = init_layernorm_from_vision_encoder;
  j["tie_word_embeddings"] = tie_word_embeddings;
  j["contrastive_hidden_size"] = contrastive_hidden_size;
  j["logit_scale_init_value"] = logit_scale_init_value;
  if (!j.contains("torch_dtype")) j["torch_dtype"] = "float32";
  nlohmann::json t = sub_extra("__text_config");
  t["model_type"] = "bridgetower_text_model";
  t["vocab_size"] = text.vocab_size;
  t["hidden_size"] = text.hidden_size;
  t["num_hidden_layers"] = text.num_hidden_layers;
  t["num_attention_heads"] = text.num_attention_heads;
  t["intermediate_size"] = text.intermediate_size;
  t["hidden_act"] = text.hidden_act;
  t["hidden_dropout_prob"] = text.hidden_dropout_prob;
  t["attention_probs_dropout_prob"] = text.attention_probs_dropout_prob;
  t["max_position_embeddings"] = text.max_position_embeddings;
  t["type_vocab_size"] = text.type_vocab_size;
  t["layer_norm_eps"] = text.layer_norm_eps;
  t["pad_token_id"] = text.pad_token_id;
  t["bos_token_id"] = text.bos_token_id;
  t["eos_token_id"] = text.eos_token_id;
  t["initializer_factor"] = text.initializer_factor;
  j["text_config"] = t;
  nlohmann::json v = sub_extra("__vision_config");
  v["model_type"] = "bridgetower_vision_model";
  v["hidden_size"] = vision.hidden_size;
  v["num_hidden_layers"] = vision.num_hidden_layers;
  v["num_channels"] = vision.num_channels;
  v["patch_size"] = vision.patch_size;
  v["image_size"] = vision.image_size;
  v["layer_norm_eps"] = vision.layer_norm_eps;
  v["initializer_factor"] = vision.initializer_factor;
  v["stop_gradient"] = vision.stop_gradient;
  v["share_layernorm"] = vision.share_layernorm;
  v["remove_last_layer"] = vision.remove_last_layer;
  j["vision_config"] = v;
  return j;
}

BridgeTowerConfig load_config(const std::string& path) {
  auto j = bt::parse_json_text(bt::read_small_file(path), path);
  return config_from_json(j, path);
}

BridgeTowerConfig load_pretrained_config(const std::string& dir) {
  BridgeTowerConfig c = load_config(dir + "/config.json");
  c.image = image_normalization_of(dir, c.vision.image_size);
  return c;
}

void save_config(const BridgeTowerConfig& c, const std::string& path) {
  std::string text = c.to_json().dump(2) + "\n";
  bt::write_file_atomic(path, text);
}

int max_text_tokens(const TextConfig& t) { return t.max_position_embeddings - t.pad_token_id - 1; }

int resolve_max_seq_length(const std::optional<int>& given, const TextConfig& t) {
  const int most = max_text_tokens(t);
  if (!given) return std::min(defaults::kMaxSeqLength, most);
  if (*given < 3) fail("--max_seq_length must be >= 3 (<s>, a token, </s>; got ", *given, ")");
  if (*given > most)
    fail("--max_seq_length ", *given, ": the model's text position embeddings hold at most ", most, " tokens "
         "(text_config.max_position_embeddings ", t.max_position_embeddings, " after the padding offset): give ",
         most, " or less (or leave it out: the model's limit)");
  return *given;
}

void check_vocab_fits(size_t ids, const TextConfig& t, const std::string& named) {
  if (ids <= static_cast<size_t>(t.vocab_size)) return;
  fail("the tokenizer (", named, ") has ", ids, " ids but the model's text embeddings hold ", t.vocab_size,
       " (text_config.vocab_size): use the model's own tokenizer, or one of at most ", t.vocab_size,
       " ids (train --tokenizer_vocab_size N builds one from the captions)");
}

BridgeTowerConfig preset(const std::string& name) {
  BridgeTowerConfig c;
  if (name == "base") return c;  // HF defaults are bridgetower-base's shapes
  if (name == "large") {
    c.hidden_size = 1024;
    c.num_attention_heads = 16;
    c.text.hidden_size = 1024;
    c.text.num_hidden_layers = 24;
    c.text.num_attention_heads = 16;
    c.text.intermediate_size = 4096;
    c.vision.hidden_size = 1024;
    c.vision.num_hidden_layers = 24;
    c.vision.patch_size = 14;
    c.vision.image_size = 294;
    return c;
  }
  if (name == "small") {
    c.hidden_size = 256;
    c.num_attention_heads = 4;
    c.num_hidden_layers = 2;
    c.text.hidden_size = 256;
    c.text.num_hidden_layers = 4;
    c.text.num_attention_heads = 4;
    c.text.intermediate_size = 1024;
    c.vision.hidden_size = 256;
    c.vision.num_hidden_layers = 4;
    c.contrastive_hidden_size = 256;
    return c;
  }
  if (name == "tiny") {  // the shapes of ../shared/fixtures/bridgetower-tiny, with the real vocabulary
    c.hidden_size = 64;
    c.num_attention_heads = 4;
    c.num_hidden_layers = 2;
    c.text.hidden_size = 64;
    c.text.num_hidden_layers = 3;
    c.text.num_attention_heads = 4;
    c.text.intermediate_size = 128;
    c.vision.hidden_size = 64;
    c.vision.num_hidden_layers = 3;
    c.vision.image_size = 64;
    c.contrastive_hidden_size = 32;
    return c;
  }
  bt::fail("--model_preset: unknown preset '", name, "' (use tiny, small, base or large)");
}

}  // namespace bt::model
