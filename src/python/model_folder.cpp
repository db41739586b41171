#include "python/model_folder.h"

#include <filesystem>
#include <utility>

#include "common/error.h"
#include "hub/dataset_files.h"
#include "hub/hub.h"
#include "model/config.h"
#include "model/preprocessor.h"

namespace bt::py {
namespace fs = std::filesystem;
namespace {

// The fetch command for a hub snapshot that lacks a file (the user downloaded only part of the repository).
std::string hint_for(const std::string& name, const HubRef& hub) {
  std::string cmd = " (fetch the whole repository with `huggingface-cli download " + name;
  if (!hub.revision.empty() && hub.revision != defaults::kHubRevision) cmd += " --revision " + hub.revision;
  return cmd + "`)";
}

template <class F>
auto with_hint(const std::string& name, const std::string& folder, const HubRef& hub, const std::string& what, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    if (folder == name) throw;  // a local folder: the error names it already
    fail(what, " ", name, ": ", e.what(), hint_for(name, hub));
  }
}

std::array<float, 3> as_float(const std::array<double, 3>& v) {
  return {static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2])};
}

}  // namespace

std::string resolve_model(const std::string& name, const HubRef& hub, const std::string& what) {
  return hub::resolve(name, hub::RepoType::Model, hub.revision, hub.cache_dir, what);
}

text::Tokenizer open_tokenizer(const std::string& name, const HubRef& hub, const std::string& what) {
  const std::string dir = resolve_model(name, hub, what);
  return with_hint(name, dir, hub, what, [&] { return text::Tokenizer::from_dir(dir); });
}

ImageSettings image_settings(const std::string& name, const HubRef& hub, const std::string& what) {
  const std::string dir = resolve_model(name, hub, what);
  return with_hint(name, dir, hub, what, [&] {
    ImageSettings s;
    if (fs::exists(dir + "/config.json")) {
      const model::BridgeTowerConfig c = model::load_pretrained_config(dir);
      s.image_size = c.vision.image_size;
      s.mean = as_float(c.image.mean), s.std = as_float(c.image.std);
    } else if (fs::exists(dir + "/preprocessor_config.json")) {
      const model::ImageProcessorConfig c = model::read_preprocessor_config(dir + "/preprocessor_config.json");
      s.image_size = c.crop_size;
      s.mean = as_float(c.norm.mean), s.std = as_float(c.norm.std);
    } else {
      fail(dir, ": neither preprocessor_config.json nor config.json (give a model folder)");
    }
    return s;
  });
}

std::string resolve_dataset(const std::string& name, const std::string& config, const std::string& split,
                            const HubRef& hub) {
  const std::string dir = hub::resolve(name, hub::RepoType::Dataset, hub.revision, hub.cache_dir, "data");
  return hub::dataset_split_pattern(dir, config, split);
}

}  // namespace bt::py
