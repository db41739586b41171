// `bridgetune encode` and `bridgetune search`: use what you trained. encode embeds a collection's images and
// captions into an index folder; search ranks it by a sentence or a picture (index/embed_index.h).
#include <memory>

#include "cli/command.h"
#include "cli/flag_table.h"
#include "cli/hub_flags.h"
#include "cli/loader_flags.h"
#include "cli/model_flags.h"
#include "common/defaults.h"
#include "common/error.h"
#include "data/captions_dataset.h"
#include "index/embed_index.h"

namespace {

bt::cli::Registrar encode_reg(
    "encode", "Embed every image and caption of a dataset with a trained model (an index for search)", 26,
    [](CLI::App& app) {
      namespace flags = bt::cli::flags;
      using bt::cli::add_flag;
      auto o = std::make_shared<bt::index::EncodeOptions>();
      auto hub = std::make_shared<bt::cli::HubFlags>();
      // The essentials first, as --help lists them (cli/flag_table.h).
      add_flag(app, flags::kModelNameOrPath, o->model_name_or_path)->required();
      add_flag(app, flags::kTokenizerName, o->tokenizer_name);
      auto ds = std::make_shared<bt::cli::HubDataset>();
      bt::cli::add_hub_dataset_flags(app, add_flag(app, flags::kData, o->data), ds.get(), hub.get());
      add_flag(app, flags::kOutputDir, o->output_dir)->required();
      add_flag(app, flags::kImageColumn, o->read.image_column);
      add_flag(app, flags::kCaptionColumn, o->read.caption_column);
      add_flag(app, flags::kMaxLineBytes, o->read.max_line_bytes)->check(CLI::PositiveNumber);
      bt::cli::add_enum(app, flags::kOnBadSample, o->read.on_bad, bt::cli::kOnBadWords);
      add_flag(app, flags::kPerDeviceEvalBatchSize, o->per_device_eval_batch_size);
      add_flag(app, flags::kNumWorkers, o->dataloader_num_workers);
      add_flag(app, flags::kTorchThreads, o->torch_threads);
      add_flag(app, flags::kMaxSeqLength, o->max_seq_length)->default_str(std::to_string(bt::defaults::kMaxSeqLength));
      add_flag(app, flags::kMaxImagePixels, o->max_image_pixels)->check(CLI::PositiveNumber);
      add_flag(app, flags::kDevice, o->device);
      bt::cli::add_switch(app, flags::kBf16, o->bf16);
      bt::cli::add_model_memory_flag(app, &o->max_model_bytes);
      app.callback([o, hub, ds] {
        o->model_name_or_path = hub->resolve(o->model_name_or_path);
        o->tokenizer_name = hub->resolve(o->tokenizer_name, "--tokenizer_name");
        if (!ds->name.empty()) o->data = ds->resolve(hub->cache_dir);
        if (o->data.empty()) bt::fail("give --data PATH or --dataset_name NAME (--dataset_config_name, --split)");
        bt::index::run_encode(*o);
      });
    });

bt::cli::Registrar search_reg(
    "search",
    "Rank an encode index: --query TEXT finds pictures, --query_image PATH finds captions (exact search: one matrix "
    "product, fine up to a few million rows)",
    27, [](CLI::App& app) {
      auto o = std::make_shared<bt::index::SearchOptions>();
      app.add_option("--index", o->index, "A bridgetune encode --output_dir")->required();
      auto q = app.add_option("--query", o->query, "A sentence: the images are ranked for it");
      auto qi = app.add_option("--query_image", o->query_image, "An image file: the index's captions are ranked for it");
      q->excludes(qi);
      qi->excludes(q);
      app.add_option("--top_k", o->top_k, "How many results")->capture_default_str();
      bt::cli::add_switch(app, bt::cli::flags::kJson, o->json);
      bt::cli::add_flag(app, bt::cli::flags::kModelNameOrPath, o->model_name_or_path);
      app.add_option("--contact_sheet", o->contact_sheet, "A PNG of the top images with their scores (text queries)");
      bt::cli::add_flag(app, bt::cli::flags::kDevice, o->device);
      bt::cli::add_switch(app, bt::cli::flags::kBf16, o->bf16);
      bt::cli::add_model_memory_flag(app, &o->max_model_bytes);
      app.callback([o] { bt::index::run_search(*o); });
    });

}  // namespace
