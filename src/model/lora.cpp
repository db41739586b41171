#include "model/lora.h"

#include <cmath>
#include <filesystem>
#include <set>

#include "checkpoint/safetensors.h"

#include "common/error.h"

namespace bt::model {

namespace {

std::vector<std::pair<std::string, LinearImpl*>> linear_layers(PretrainedModel& m) {
  std::vector<std::pair<std::string, LinearImpl*>> out;
  for (auto& kv : m.named_modules("", false))
    if (auto* l = dynamic_cast<LinearImpl*>(kv.value().get())) out.emplace_back(kv.key(), l);
  return out;
}

// HF's vision attention is nn.MultiheadAttention: it reads out_proj.weight itself, so an adapter PEFT wraps
// around out_proj never runs there. Refused rather than trained into a model HF would not reproduce.
void refuse_unreproducible(const std::string& name) {
  if (name_matches(name, {"attn.out_proj"}))
    fail("--lora_target_modules: ", name, " is nn.MultiheadAttention's out_proj in HF, which PEFT's adapter does "
         "not reach (its weight is read directly); adapt the vision tower through c_fc,c_proj");
}

void attach(LinearImpl& l, const LoraSpec& s) {
  const auto o = l.weight.options().requires_grad(false);
  const int64_t in = l.weight.size(1), out = l.weight.size(0);
  auto a = l.register_module("lora_A", std::make_shared<torch::nn::Module>());
  auto b = l.register_module("lora_B", std::make_shared<torch::nn::Module>());
  l.lora_A = a->register_parameter("weight", torch::empty({s.rank, in}, o));
  l.lora_B = b->register_parameter("weight", torch::empty({out, s.rank}, o));
  if (!l.weight.device().is_meta()) {
    torch::NoGradGuard ng;
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));  // kaiming_uniform_(a = sqrt(5)), PEFT's init
    l.lora_A.uniform_(-bound, bound);
    l.lora_B.zero_();
  }
  l.lora_scaling = s.scaling();
  l.lora_dropout = s.dropout;
}

void check_every_name_used(const std::vector<std::string>& names, const std::set<std::string>& used,
                           const char* flag, const char* what) {
  for (const std::string& t : names)
    if (!used.count(t)) fail(flag, ": ", t, " names no ", what, " of the model");
}

}  // namespace

int add_lora(PretrainedModel& m, const LoraSpec& s) {
  if (!s.active()) return 0;
  if (has_lora(m)) fail("the model already has LoRA adapters");
  std::set<std::string> used;
  int adapted = 0;
  for (auto& [name, layer] : linear_layers(m)) {
    bool hit = false;
    for (const std::string& t : s.target_modules)
      if (name_matches(name, {t})) used.insert(t), hit = true;
    if (!hit) continue;
    refuse_unreproducible(name);
    attach(*layer, s);
    ++adapted;
  }
  check_every_name_used(s.target_modules, used, "--lora_target_modules", "Linear layer");
  used.clear();
  for (auto& kv : m.named_parameters(true)) {
    for (const std::string& t : s.modules_to_save)
      if (in_modules_to_save(kv.key(), {t})) used.insert(t);
    kv.value().set_requires_grad(is_lora_parameter(kv.key()) || in_modules_to_save(kv.key(), s.modules_to_save));
  }
  check_every_name_used(s.modules_to_save, used, "--lora_modules_to_save", "module");
  m.lora = s;
  return adapted;
}

bool has_lora(PretrainedModel& m) {
  for (auto& [name, layer] : linear_layers(m))
    if (layer->lora_A.defined()) return true;
  return false;
}

void merge_lora(PretrainedModel& m) {
  torch::NoGradGuard ng;
  for (auto& [name, l] : linear_layers(m)) {
    if (!l->lora_A.defined()) continue;
    const Tensor delta = torch::matmul(l->lora_B.to(torch::kFloat), l->lora_A.to(torch::kFloat)) * l->lora_scaling;
    l->weight.add_(delta.to(l->weight.scalar_type()));
    l->unregister_module("lora_A");
    l->unregister_module("lora_B");
    l->lora_A = l->lora_B = Tensor();
    l->lora_scaling = l->lora_dropout = 0;
  }
  m.lora = LoraSpec{};
}

void save_adapter(PretrainedModel& m, const LoraSpec& s, const std::string& dir) {
  std::vector<std::pair<std::string, Tensor>> ts;
  for (const auto& kv : m.named_parameters(true))
    if (is_lora_parameter(kv.key()) || in_modules_to_save(kv.key(), s.modules_to_save))
      ts.emplace_back(peft_key(kv.key()), kv.value().detach().to(torch::kFloat));
  for (const auto& [name, t] : ts)
    if (!torch::isfinite(t).all().item<bool>())
      fail("refusing to write ", dir, "/", kAdapterWeightsFile, ": ", name, " holds NaN/inf values (diverged)");
  save_tensors(dir + "/" + kAdapterWeightsFile, ts);
  write_adapter_config(dir + "/" + kAdapterConfigFile, s);
}

namespace {

// adapter_model.safetensors checked against the adapters and modules_to_save `m` has, from the header alone (the
// data stays mapped, nothing is allocated): every one there with its shape and a floating-point dtype, nothing else.
checkpoint::SafeTensors check_adapter_file(PretrainedModel& m, const std::string& file, const LoraSpec& s) {
  checkpoint::SafeTensors st = checkpoint::SafeTensors::open(file);
  std::set<std::string> expected;
  for (auto& kv : m.named_parameters(true)) {
    if (!is_lora_parameter(kv.key()) && !in_modules_to_save(kv.key(), s.modules_to_save)) continue;
    expected.insert(peft_key(kv.key()));
    const checkpoint::TensorView* t = st.find(peft_key(kv.key()));
    if (!t) fail(file, ": lacks tensor '", peft_key(kv.key()), "'");
    if (c10::IntArrayRef(t->shape) != kv.value().sizes())
      fail(file, ": tensor '", t->name, "' has shape ", shape_str(t->shape), ", the model expects ",
           shape_str(kv.value().sizes()));
    if (!(t->dtype == checkpoint::DType::F32 || t->dtype == checkpoint::DType::F16 ||
          t->dtype == checkpoint::DType::BF16 || t->dtype == checkpoint::DType::F64))
      fail(file, ": tensor '", t->name, "' is not floating-point");
  }
  for (const auto& t : st.tensors())
    if (!expected.count(t.name))
      fail(file, ": tensor '", t.name.substr(0, 200), "' has no place in the model (",
           st.tensors().size() - expected.size(), " such tensors; is adapter_config.json's target_modules this "
           "file's?)");
  return st;
}

}  // namespace

void load_adapter_weights(PretrainedModel& m, const std::string& dir) {
  const std::string file = dir + "/" + kAdapterWeightsFile;
  const LoraSpec s = read_adapter_config(dir + "/" + kAdapterConfigFile);
  const checkpoint::SafeTensors st = check_adapter_file(m, file, s);  // shapes first: copies below are the model's size
  torch::NoGradGuard ng;
  for (auto& kv : m.named_parameters(true)) {
    if (!is_lora_parameter(kv.key()) && !in_modules_to_save(kv.key(), s.modules_to_save)) continue;
    const checkpoint::TensorView* t = st.find(peft_key(kv.key()));
    copy_from_view(kv.value(), *t);
    if (!torch::isfinite(kv.value()).all().item<bool>())
      fail(file, ": tensor '", t->name, "' holds NaN/inf values (a diverged or damaged adapter)");
  }
}

int64_t check_adapter_fits(const BridgeTowerConfig& c, const std::string& dir, ModelBudget budget) {
  const std::string config = dir + "/" + kAdapterConfigFile;
  const LoraSpec spec = read_adapter_config(config);
  BridgeTowerForContrastiveLearning meta(c, torch::TensorOptions().device(torch::kMeta));
  const int64_t base = meta->count_parameters();
  try {
    add_lora(*meta, spec);  // on the meta device: the names checked, the adapters counted, nothing allocated
  } catch (const Error& e) {
    fail(config, ": ", e.what());
  }
  budget.extra_parameters = meta->count_parameters() - base;
  budget.extra_what = config;
  check_model_memory(c, budget);
  check_adapter_file(*meta, dir + "/" + kAdapterWeightsFile, spec);
  return budget.extra_parameters;
}

bool has_adapter(const std::string& dir) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::path(dir) / kAdapterConfigFile, ec);
}

LoraSpec apply_adapter(PretrainedModel& m, const std::string& dir) {
  const LoraSpec s = read_adapter_config(dir + "/" + kAdapterConfigFile);
  add_lora(m, s);
  load_adapter_weights(m, dir);
  return s;
}

}  // namespace bt::model
