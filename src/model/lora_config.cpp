#include "model/lora_config.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/file_gate.h"
#include "common/json.h"

namespace bt::model {

std::vector<std::string> split_names(const std::string& csv) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= csv.size()) {
    size_t end = csv.find(',', start);
    if (end == std::string::npos) end = csv.size();
    std::string part = csv.substr(start, end - start);
    const size_t a = part.find_first_not_of(" \t"), b = part.find_last_not_of(" \t");
    if (a != std::string::npos) out.push_back(part.substr(a, b - a + 1));
    start = end + 1;
  }
  return out;
}

LoraSpec lora_spec(int rank, double alpha, double dropout, const std::string& targets, const std::string& to_save) {
  LoraSpec s;
  s.rank = rank, s.alpha = alpha, s.dropout = dropout;
  s.target_modules = split_names(targets);
  s.modules_to_save = split_names(to_save);
  if (rank < 1) fail("--lora_rank must be >= 1 (got ", rank, ")");
  if (!(alpha > 0) || !std::isfinite(alpha)) fail("--lora_alpha must be > 0 (got ", alpha, ")");
  if (!(dropout >= 0 && dropout < 1)) fail("--lora_dropout must be in [0, 1) (got ", dropout, ")");
  if (s.target_modules.empty())
    fail("--lora_target_modules names no module (give Linear layer names such as ", kDefaultLoraTargets, ")");
  return s;
}

bool name_matches(const std::string& name, const std::vector<std::string>& suffixes) {
  for (const std::string& t : suffixes)
    if (name == t || (name.size() > t.size() && name.compare(name.size() - t.size(), t.size(), t) == 0 &&
                      name[name.size() - t.size() - 1] == '.'))
      return true;
  return false;
}

bool is_lora_parameter(const std::string& n) {
  return n.find(".lora_A.") != std::string::npos || n.find(".lora_B.") != std::string::npos;
}

bool in_modules_to_save(const std::string& param_name, const std::vector<std::string>& modules_to_save) {
  // Any module the parameter sits in (itc_text_head.fc.weight is in itc_text_head and itc_text_head.fc).
  for (size_t dot = param_name.find('.'); dot != std::string::npos; dot = param_name.find('.', dot + 1))
    if (name_matches(param_name.substr(0, dot), modules_to_save)) return true;
  return false;
}

std::string peft_key(const std::string& param_name) { return kPeftPrefix + param_name; }

std::string param_name_of(const std::string& key) {
  const std::string prefix = kPeftPrefix;
  return key.rfind(prefix, 0) == 0 ? key.substr(prefix.size()) : std::string();
}

void write_adapter_config(const std::string& path, const LoraSpec& s) {
  // PEFT's LoraConfig fields (0.10 and later read this; unknown fields are what older PEFT refuses, so none).
  nlohmann::json j = {{"peft_type", "LORA"},
                      {"task_type", nullptr},
                      {"auto_mapping", nullptr},
                      {"base_model_name_or_path", s.base_model_name_or_path.empty()
                                                      ? nlohmann::json(nullptr)
                                                      : nlohmann::json(s.base_model_name_or_path)},
                      {"revision", nullptr},
                      {"inference_mode", true},
                      {"r", s.rank},
                      {"lora_alpha", s.alpha},
                      {"lora_dropout", s.dropout},
                      {"target_modules", s.target_modules},
                      {"modules_to_save", s.modules_to_save.empty() ? nlohmann::json(nullptr)
                                                                    : nlohmann::json(s.modules_to_save)},
                      {"bias", "none"},
                      {"fan_in_fan_out", false},
                      {"init_lora_weights", true},
                      {"layers_to_transform", nullptr},
                      {"layers_pattern", nullptr},
                      {"rank_pattern", nlohmann::json::object()},
                      {"alpha_pattern", nlohmann::json::object()},
                      {"use_rslora", false},
                      {"use_dora", false}};
  bt::write_file_atomic(path, j.dump(2) + "\n");
}

namespace {
// A field PEFT may write that bridgetune does not implement: refused unless it holds the plain value.
void refuse_unless(const nlohmann::json& j, const char* key, const nlohmann::json& plain, const std::string& path) {
  if (!j.contains(key) || j[key].is_null() || j[key] == plain || (j[key].is_structured() && j[key].empty())) return;
  fail(path, ": ", key, " = ", j[key].dump().substr(0, 80), " is not supported (bridgetune reads plain LoRA "
       "adapters: merge them with PEFT's merge_and_unload() first)");
}
std::vector<std::string> names_of(const nlohmann::json& v, const char* key, const std::string& path) {
  if (v.is_null()) return {};
  if (v.is_string()) fail(path, ": ", key, " is a pattern string; bridgetune reads a list of module names");
  if (!v.is_array()) fail(path, ": ", key, " must be a list of module names");
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.is_string()) fail(path, ": ", key, " must be a list of module names");
    out.push_back(e.get<std::string>());
  }
  return out;
}

// `r` as a whole number in [1, kMaxLoraRank], read without a conversion that could wrap (4294967300 -> 4) or cut
// (4.7 -> 4): an integral float (8.0) is a whole number too.
int adapter_rank(const nlohmann::json& j, const std::string& path) {
  const auto it = j.find("r");
  if (it == j.end()) fail(path, ": no r (the adapters' rank)");
  const bool whole = it->is_number_integer() || (it->is_number_float() && std::isfinite(it->get<double>()) &&
                                                 std::floor(it->get<double>()) == it->get<double>());
  if (!whole) fail(path, ": r = ", it->dump().substr(0, 40), " is not a whole number (the adapters' rank)");
  const double r = it->is_number_unsigned() ? double(it->get<uint64_t>())
                   : it->is_number_integer() ? double(it->get<int64_t>())
                                             : it->get<double>();
  if (!(r >= 1 && r <= kMaxLoraRank))
    fail(path, ": r = ", it->dump().substr(0, 40), " is outside [1, ", kMaxLoraRank, "]");
  return int(r);
}

}  // namespace

LoraSpec read_adapter_config(const std::string& path) { return parse_adapter_config(bt::read_small_file(path), path); }

LoraSpec parse_adapter_config(std::string_view text, const std::string& path) {
  const nlohmann::json j = bt::parse_json_text(text, path);
  if (!j.is_object()) fail(path, ": not a JSON object");
  // is_string first: j.value() on a number would throw nlohmann's type_error, not a line naming the file.
  if (!j.contains("peft_type") || !j["peft_type"].is_string() || j["peft_type"].get<std::string>() != "LORA")
    fail(path, ": peft_type ", j.contains("peft_type") ? j["peft_type"].dump().substr(0, 40) : "(none)",
         " is not LORA (the only adapter type bridgetune reads)");
  for (const char* k : {"use_dora", "use_rslora", "fan_in_fan_out"}) refuse_unless(j, k, false, path);
  refuse_unless(j, "bias", "none", path);
  for (const char* k : {"rank_pattern", "alpha_pattern", "layers_to_transform"})
    refuse_unless(j, k, nlohmann::json::object(), path);
  LoraSpec s;
  s.rank = adapter_rank(j, path);
  try {
    s.alpha = j.value("lora_alpha", 8.0);
    s.dropout = j.value("lora_dropout", 0.0);
  } catch (const nlohmann::json::exception&) {
    fail(path, ": lora_alpha and lora_dropout must be numbers");
  }
  if (!(s.alpha > 0) || !std::isfinite(s.alpha) || !(s.dropout >= 0 && s.dropout < 1))
    fail(path, ": lora_alpha must be > 0 and lora_dropout in [0, 1)");
  s.target_modules = names_of(j.value("target_modules", nlohmann::json()), "target_modules", path);
  s.modules_to_save = names_of(j.value("modules_to_save", nlohmann::json()), "modules_to_save", path);
  if (s.target_modules.empty()) fail(path, ": target_modules names no module");
  if (j.contains("base_model_name_or_path") && j["base_model_name_or_path"].is_string())
    s.base_model_name_or_path = j["base_model_name_or_path"].get<std::string>();
  return s;
}

}  // namespace bt::model
