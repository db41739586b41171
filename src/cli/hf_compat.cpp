#include "cli/hf_compat.h"

#include <cstdio>
#include <memory>

#include "cli/flag_table.h"
#include "common/error.h"

namespace bt::cli {

const std::vector<HfCompatFlag>& hf_compat_flags() {
  static const std::vector<HfCompatFlag> table = {
      // Accepted, with no effect here.
      {"torch_compile", true, false, "ignored: libtorch's C++ API has no torch.compile (the fused kernels play that part)", {}},
      {"dataloader_pin_memory", true, false, "ignored: the media pipeline pins its host buffers itself on CUDA", {}},
      {"tf32", true, false, "ignored: TF32 stays at libtorch's defaults (bf16 autocast does the matmuls)", {}},
      {"disable_tqdm", true, false, "ignored: progress bars are drawn only on a terminal", {}},
      {"save_safetensors", true, false, "ignored: checkpoints are always written as safetensors", {}},
      {"ddp_find_unused_parameters", true, false, "ignored: gradients are all-reduced for every trainable parameter", {}},
      {"run_name", false, false, "ignored: a run is named by its --output_dir", {}},
      {"log_level", false, false, "ignored: bridgetune logs one line per --logging_steps", {}},
      {"optim", false, true, "only AdamW is implemented (fused on CUDA): use adamw_torch or adamw_torch_fused",
       {"adamw_torch", "adamw_torch_fused", "adamw_hf", "adamw"}},
      {"logging_strategy", false, true, "only step logging is implemented: use --logging_steps N",
       {"steps", "no"}},
      // Refused: going on would differ from what the flag promises.
      {"push_to_hub", true, true, "refused: bridgetune never uses the network at run time; upload --output_dir yourself", {}},
      {"hub_model_id", false, true, "refused: no uploads at run time (see --push_to_hub)", {}},
  };
  return table;
}

namespace {

struct Given {
  const HfCompatFlag* flag;
  std::string value;  // "" for a switch left unset
  bool on = false;    // a switch's value
  CLI::Option* opt = nullptr;
};

void check(const Given& g) {
  if (g.opt->count() == 0) return;
  const HfCompatFlag& f = *g.flag;
  if (f.boolean) {
    if (!g.on) return;  // `--push_to_hub False` asks for nothing
    if (f.refused) fail("--", f.name, ": ", f.reason);
    std::fprintf(stderr, "note: --%s %s\n", f.name.c_str(), f.reason.c_str());
    return;
  }
  for (const auto& ok : f.accepted_values)
    if (g.value == ok) {
      if (f.name == "optim") std::fprintf(stderr, "note: --optim %s: bridgetune's AdamW\n", g.value.c_str());
      return;
    }
  if (f.refused) fail("--", f.name, " ", g.value, ": ", f.reason);
  std::fprintf(stderr, "note: --%s %s\n", f.name.c_str(), f.reason.c_str());
}

}  // namespace

void add_hf_compat_flags(CLI::App& cmd) {
  auto given = std::make_shared<std::vector<Given>>();
  given->reserve(hf_compat_flags().size());  // stable addresses for the options' targets
  const std::string group = group::kHfCompat;  // listed last in --help (cli/flag_table.h)
  for (const HfCompatFlag& f : hf_compat_flags()) {
    if (cmd.get_option_no_throw("--" + f.name)) continue;  // the command implements it
    given->push_back({&f, "", false, nullptr});
    Given& g = given->back();
    g.opt = f.boolean ? cmd.add_flag("--" + f.name, g.on, f.reason) : cmd.add_option("--" + f.name, g.value, f.reason);
    g.opt->group(group);
  }
  cmd.parse_complete_callback([given] {
    for (const Given& g : *given) check(g);
  });
}

}  // namespace bt::cli
