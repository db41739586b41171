// `bridgetune forward`: runs the contrastive model of a checkpoint folder on a batch file in eval mode and
// writes its outputs (text_embeds, image_embeds, cross_embeds, logits, loss), the names the reference uses.
#include <chrono>
#include <cstdio>

#include "cli/command.h"
#include "cli/flag_table.h"
#include "cli/hub_flags.h"
#include "cli/model_flags.h"
#include "common/error.h"
#include "model/api.h"

namespace {

struct ForwardArgs {
  std::string model, batch, out;
  bt::cli::HubFlags hub;
  int threads = 0;
  uint64_t max_model_bytes = 0;
};

bt::cli::Registrar reg("forward", "Run the contrastive model on a batch (safetensors in, safetensors out)", 60,
                       [](CLI::App& app) {
                         auto a = std::make_shared<ForwardArgs>();
                         bt::cli::add_flag(app, bt::cli::flags::kModelNameOrPath, a->model)->required();
                         bt::cli::add_flag(app, bt::cli::flags::kBatch, a->batch)->required();
                         bt::cli::add_flag(app, bt::cli::flags::kOut, a->out)->required();
                         bt::cli::add_hub_flags(app, &a->hub.revision, &a->hub.cache_dir);
                         bt::cli::add_flag(app, bt::cli::flags::kThreads, a->threads);
                         bt::cli::add_model_memory_flag(app, &a->max_model_bytes);
                         app.callback([a] {
                           bt::model::configure_torch_threads(a->threads);
                           auto t0 = std::chrono::steady_clock::now();
                           bt::model::forward_file(a->hub.resolve(a->model), a->batch, a->out, a->max_model_bytes);
                           double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                           std::fprintf(stderr, "forward: wrote %s in %.2f s\n", a->out.c_str(), s);
                         });
                       });

}  // namespace
