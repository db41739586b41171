// What bridgetune's Python API takes by name: a model folder or hub id for tokenizer= / preprocessor= and a hub
// dataset id for data=, resolved offline by the same C++ the CLI runs (hub/hub.h, hub/dataset_files.h), and the image
// settings a model folder asks for (model/preprocessor.h). Python-free.
//
// Contract:
//  - A local folder is used as it is; "org/name" is a snapshot of the local Hugging Face cache at `revision`
//    (cache_dir, else $HF_HUB_CACHE ...). Anything missing throws one bt::Error naming the argument, where it
//    looked and the `huggingface-cli download ...` command that fetches it. A hub snapshot lacking a file the call
//    needs (a partial download) gets the same command appended.
//  - image_settings: with config.json, the model's vision image_size and preprocessor_config.json's mean/std
//    (model::image_normalization_of, which names a differing size/crop in one stderr line); a folder with only
//    preprocessor_config.json gives its crop size and mean/std (HF's image processor alone); neither file: an error.
#pragma once
#include <array>
#include <string>

#include "common/defaults.h"
#include "text/tokenizer.h"

namespace bt::py {

struct HubRef {
  std::string revision = defaults::kHubRevision, cache_dir;
};

struct ImageSettings {
  int image_size = 0;
  std::array<float, 3> mean{}, std{};
};

// A folder: `name` itself when it is one, else the snapshot of hub model `name`. `what` prefixes errors.
std::string resolve_model(const std::string& name, const HubRef& hub, const std::string& what);

text::Tokenizer open_tokenizer(const std::string& name, const HubRef& hub, const std::string& what = "tokenizer");

ImageSettings image_settings(const std::string& name, const HubRef& hub, const std::string& what = "preprocessor");

// The parquet files (a glob) of `split` / `config` ("" = the only or default config) of hub dataset `name` (or a
// local folder of the hub layout), as `bridgetune evaluate --dataset_name` finds them.
std::string resolve_dataset(const std::string& name, const std::string& config, const std::string& split,
                            const HubRef& hub);

}  // namespace bt::py
