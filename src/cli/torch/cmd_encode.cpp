// `bridgetune encode` and `bridgetune search`: use what you trained. encode embeds a collection's images and
// captions into an index folder; search ranks it by a sentence or a picture (train/embed_index.h).
#include <array>
#include <memory>

#include "cli/command.h"
#include "cli/hub_flags.h"
#include "cli/loader_flags.h"
#include "cli/model_flags.h"
#include "common/error.h"
#include "data/captions_dataset.h"
#include "hub/dataset_files.h"
#include "train/embed_index.h"

namespace {

bt::cli::Registrar encode_reg(
    "encode", "Embed every image and caption of a dataset with a trained model (an index for search)", 26,
    [](CLI::App& app) {
      auto o = std::make_shared<bt::train::EncodeOptions>();
      auto hub = std::make_shared<bt::cli::HubFlags>();
      app.add_option("--model_name_or_path", o->model_name_or_path,
                     "Checkpoint folder (a train --output_dir) or hub id (org/name) in the local HF cache")
          ->required();
      bt::cli::add_hub_flags(app, &hub->revision, &hub->cache_dir);
      auto data = app.add_option("--data", o->data,
                                 "What to embed: a captions file or folder, HF parquet (file, folder, glob) or tar "
                                 "shards, as train reads them");
      auto ds = std::make_shared<std::array<std::string, 4>>(std::array<std::string, 4>{"", "", bt::cli::kDefaultEvalSplit, "main"});
      auto dn = app.add_option("--dataset_name", (*ds)[0], "Or a hub dataset (org/name) in the local HF cache");
      app.add_option("--dataset_config_name", (*ds)[1], "Its config");
      app.add_option("--split", (*ds)[2], "Its split")->capture_default_str();
      app.add_option("--dataset_revision", (*ds)[3], "Hub datasets: branch, tag or commit")->capture_default_str();
      data->excludes(dn);
      dn->excludes(data);
      app.add_option("--output_dir", o->output_dir,
                     "The index folder: image_embeds.npy, images.jsonl, text_embeds.npy, texts.jsonl, index.json")
          ->required();
      app.add_option("--image_column", o->read.image_column, "Image column (CSV/JSONL/parquet)")->capture_default_str();
      app.add_option("--caption_column", o->read.caption_column, bt::source::kCaptionColumnHelp);
      app.add_option("--per_device_eval_batch_size", o->per_device_eval_batch_size, "Images per forward")
          ->capture_default_str();
      app.add_option("--dataloader_num_workers", o->dataloader_num_workers, "Loader threads decoding images")
          ->capture_default_str();
      app.add_option("--torch_threads", o->torch_threads, "Intra-op threads (0: every core for the small preset and up, else the cores the loader workers leave, at least 1)")
          ->capture_default_str();
      app.add_option("--max_seq_length", o->max_seq_length, "Caption truncation (tokens)")->capture_default_str();
      app.add_option("--max_line_bytes", o->read.max_line_bytes, "Refuse a longer JSONL line or CSV record")
          ->capture_default_str()
          ->check(CLI::PositiveNumber);
      bt::cli::add_enum_flag(app, "--on_bad_sample", o->read.on_bad, bt::cli::kOnBadWords,
                             "error | skip (count and leave out unreadable images)");
      app.add_option("--device", o->device, "cpu | cuda")->capture_default_str();
      app.add_flag("--bf16", o->bf16, "bf16 autocast");
      bt::cli::add_model_memory_flag(app, &o->max_model_bytes);
      app.callback([o, hub, ds] {
        o->model_name_or_path = hub->resolve(o->model_name_or_path);
        if (!(*ds)[0].empty())
          o->data = bt::hub::resolve_dataset_split({(*ds)[0], (*ds)[1], (*ds)[3], hub->cache_dir}, (*ds)[2]);
        if (o->data.empty()) bt::fail("give --data PATH or --dataset_name NAME (--dataset_config_name, --split)");
        bt::train::run_encode(*o);
      });
    });

bt::cli::Registrar search_reg(
    "search",
    "Rank an encode index: --query TEXT finds pictures, --query_image PATH finds captions (exact search: one matrix "
    "product, fine up to a few million rows)",
    27, [](CLI::App& app) {
      auto o = std::make_shared<bt::train::SearchOptions>();
      app.add_option("--index", o->index, "A bridgetune encode --output_dir")->required();
      auto q = app.add_option("--query", o->query, "A sentence: the images are ranked for it");
      auto qi = app.add_option("--query_image", o->query_image, "An image file: the index's captions are ranked for it");
      q->excludes(qi);
      qi->excludes(q);
      app.add_option("--top_k", o->top_k, "How many results")->capture_default_str();
      app.add_flag("--json", o->json, "One {\"rank\", \"image\"|\"text\", \"score\"} JSON object per line");
      app.add_option("--model_name_or_path", o->model_name_or_path, "The model (default: the index's)");
      app.add_option("--contact_sheet", o->contact_sheet, "A PNG of the top images with their scores (text queries)");
      app.add_option("--device", o->device, "cpu | cuda")->capture_default_str();
      app.add_flag("--bf16", o->bf16, "bf16 autocast");
      bt::cli::add_model_memory_flag(app, &o->max_model_bytes);
      app.callback([o] { bt::train::run_search(*o); });
    });

}  // namespace
