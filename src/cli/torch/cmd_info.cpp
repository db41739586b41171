// `bridgetune info`: parameter count and shapes of a preset or a checkpoint folder's config.json; --write_config
// saves that config as an HF config.json (what a Python peer builds the same model from).
#include <cstdio>
#include <filesystem>

#include "checkpoint/safetensors.h"
#include "checkpoint/torch_zip.h"
#include "cli/command.h"
#include "cli/flag_table.h"
#include "cli/hub_flags.h"
#include "common/error.h"
#include "common/machine_memory.h"
#include "model/api.h"
#include "model/config.h"
#include "model/memory_budget.h"

namespace {

struct InfoArgs {
  std::string preset, model, write_config;
  bt::cli::HubFlags hub;
};

std::string grouped(int64_t n) {
  std::string s = std::to_string(n), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

void run(InfoArgs a) {
  if (a.preset.empty() == a.model.empty()) bt::fail("info: give exactly one of --model_preset or --model_name_or_path");
  a.model = a.hub.resolve(a.model);
  auto cfg = a.model.empty() ? bt::model::preset(a.preset) : bt::model::load_config(a.model + "/config.json");
  if (!a.write_config.empty()) {
    const std::filesystem::path folder = std::filesystem::path(a.write_config).parent_path();
    std::error_code ec;
    if (!folder.empty()) std::filesystem::create_directories(folder, ec);
    if (ec) bt::fail("--write_config: cannot create the folder ", folder.string(), ": ", ec.message());
    bt::model::save_config(cfg, a.write_config);
    std::printf("config: %s\n", a.write_config.c_str());
  }
  std::printf("model: %s\n", a.model.empty() ? ("preset " + a.preset).c_str() : a.model.c_str());
  std::printf("%s", bt::model::describe(cfg).c_str());
  std::printf("parameters: %s (BridgeTowerForContrastiveLearning)\n",
              grouped(bt::model::parameter_count(cfg, "contrastive")).c_str());
  std::printf("            %s (BridgeTowerForImageAndTextRetrieval), %s (BridgeTowerForMaskedLM)\n",
              grouped(bt::model::parameter_count(cfg, "itm")).c_str(),
              grouped(bt::model::parameter_count(cfg, "mlm")).c_str());
  // What train/evaluate would check before allocating (model/memory_budget.h); info itself allocates nothing.
  const auto infer = bt::model::estimate_model_memory(cfg, {false, 1, 0});
  const auto train = bt::model::estimate_model_memory(cfg, {true, 1, 0});
  std::printf("memory: %s of float32 weights; training needs about %s (gradients, AdamW state, batch-1 "
              "activations); this machine has %s free\n",
              bt::bytes_str(infer.weights).c_str(), bt::bytes_str(train.total()).c_str(),
              bt::bytes_str(bt::machine_memory_bytes()).c_str());
  if (!a.model.empty() && std::filesystem::exists(a.model + "/model.safetensors")) {
    auto f = bt::checkpoint::SafeTensors::open(a.model + "/model.safetensors");
    int64_t n = 0;
    for (const auto& t : f.tensors()) n += t.numel();
    std::printf("checkpoint: %zu tensors, %s values in model.safetensors\n", f.tensors().size(), grouped(n).c_str());
  } else if (!a.model.empty() && std::filesystem::exists(a.model + "/pytorch_model.bin")) {
    auto f = bt::checkpoint::TorchCheckpoint::open(a.model + "/pytorch_model.bin");
    int64_t n = 0;
    for (const auto& t : f.tensors()) {
      int64_t k = 1;
      for (int64_t d : t.rec.shape) k *= d;
      n += k;
    }
    std::printf("checkpoint: %zu tensors, %s values in pytorch_model.bin\n", f.tensors().size(), grouped(n).c_str());
  }
}

bt::cli::Registrar reg("info", "Print a model's parameter count and shapes", 61, [](CLI::App& app) {
  auto a = std::make_shared<InfoArgs>();
  bt::cli::add_flag(app, bt::cli::flags::kModelPreset, a->preset);
  bt::cli::add_flag(app, bt::cli::flags::kModelNameOrPath, a->model);
  app.add_option("--write_config", a->write_config,
                 "Also write the model's config as a Hugging Face config.json to this path (BridgeTowerConfig.from_json_file reads it)");
  bt::cli::add_hub_flags(app, &a->hub.revision, &a->hub.cache_dir);
  app.callback([a] { run(*a); });
});

}  // namespace
