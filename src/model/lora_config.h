// LoRA adapters as PEFT writes and reads them (torch-free: the settings, the names, adapter_config.json).
//  - A Linear layer named N whose last name part is one of `target_modules` (PEFT's rule: N == t or N ends with
//    "." + t) gets a rank-r update: y = W x + b + (alpha / r) * B A dropout(x), A [r, in], B [out, r]; its
//    parameters are N.lora_A.weight and N.lora_B.weight, saved in adapter_model.safetensors as
//    "base_model.model." + N + ".lora_A.weight" (PEFT's keys: the adapter name "default" is not written).
//  - `modules_to_save` (name suffixes too) are trained whole and saved beside the adapters under
//    "base_model.model." + their parameter names; everything else is frozen.
//  - adapter_config.json: peft_type LORA with PEFT's LoraConfig fields; read back refusing what bridgetune does
//    not implement (another peft_type, DoRA, rsLoRA, per-layer ranks, trained biases, fan_in_fan_out).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace bt::model {

inline constexpr const char* kAdapterConfigFile = "adapter_config.json";
inline constexpr const char* kAdapterWeightsFile = "adapter_model.safetensors";
inline constexpr const char* kPeftPrefix = "base_model.model.";
// Every tower gets adapters: the text and cross-modal layers' attention projections (query, value) and the vision
// blocks' MLP (c_fc, c_proj; HF's vision attention is nn.MultiheadAttention, whose projections PEFT cannot adapt).
inline constexpr const char* kDefaultLoraTargets = "query,value,c_fc,c_proj";
// The contrastive heads start untrained on a plain BridgeTowerModel checkpoint: trained whole by default.
inline constexpr const char* kDefaultLoraModulesToSave = "itc_text_head,itc_image_head,itc_cross_modal_head";

// The largest rank adapter_config.json may give (PEFT's ranks are 4..256; memory and the tensors' shapes are
// checked beside it, before anything is allocated: model/lora.h).
inline constexpr int kMaxLoraRank = 65536;

struct LoraSpec {
  int rank = 0;  // 0: no adapters
  double alpha = 16;
  double dropout = 0;  // on the adapter's input, while training
  std::vector<std::string> target_modules;
  std::vector<std::string> modules_to_save;
  std::string base_model_name_or_path;  // adapter_config.json's ("" writes null)
  bool active() const { return rank > 0; }
  double scaling() const { return alpha / rank; }
};

// "a,b , c" -> {"a", "b", "c"} (empty parts dropped).
std::vector<std::string> split_names(const std::string& csv);
// The spec of the --lora_* flags, checked: rank >= 1, alpha > 0, 0 <= dropout < 1, at least one target.
LoraSpec lora_spec(int rank, double alpha, double dropout, const std::string& targets, const std::string& to_save);

// PEFT's target rule on a module name.
bool name_matches(const std::string& module_name, const std::vector<std::string>& suffixes);
// "X.lora_A.weight" / "X.lora_B.weight".
bool is_lora_parameter(const std::string& param_name);
// Whether a parameter sits in one of `modules_to_save` (the name of a module containing it matches).
bool in_modules_to_save(const std::string& param_name, const std::vector<std::string>& modules_to_save);

std::string peft_key(const std::string& param_name);
// The parameter name of a PEFT key ("" when it lacks the "base_model.model." prefix).
std::string param_name_of(const std::string& peft_key);

void write_adapter_config(const std::string& path, const LoraSpec& s);
// Throws bt::Error naming the file and the field: r must be a whole number in [1, kMaxLoraRank] (no wrap, no
// rounding), lora_alpha > 0, lora_dropout in [0, 1).
LoraSpec read_adapter_config(const std::string& path);
// The same from the file's text (`path` names it in errors; fuzz/model/fuzz_adapter_config.cpp).
LoraSpec parse_adapter_config(std::string_view text, const std::string& path);

}  // namespace bt::model
