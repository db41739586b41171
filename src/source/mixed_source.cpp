#include "source/mixed_source.h"

#include <filesystem>

#include "common/error.h"
#include "data/concat_dataset.h"

namespace bt::source {

Source open_mixed(const std::vector<std::string>& paths, const MixOptions& mix, const SourceOptions& opts) {
  if (paths.empty()) fail(opts.flag, ": no datasets given");
  SourceOptions one = opts;
  one.locality_order = false;  // each dataset is read in a permutation of its own (mix_order.h)
  std::vector<std::shared_ptr<const data::Dataset>> parts;
  std::vector<size_t> sizes;
  for (const std::string& p : paths) {
    parts.push_back(open_source(p, one).dataset);
    sizes.push_back(parts.back()->size());
  }
  Source s;
  s.kind = data::classify_source(paths.front());
  s.mix = std::make_shared<const loader::MixPlan>(
      loader::make_mix_plan(paths, std::move(sizes), mix.weights, mix.stopping, mix.seed));
  s.dataset = std::make_shared<data::ConcatDataset>(std::move(parts), paths);
  return s;
}

std::vector<std::string> split_train_files(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& v : values) {
    std::error_code ec;
    if (v.rfind("pipe:", 0) == 0 || std::filesystem::exists(v, ec)) {
      out.push_back(v);
      continue;
    }
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= v.size(); ++i) {
      if (i < v.size() && v[i] == '{') ++depth;
      else if (i < v.size() && v[i] == '}') --depth;
      else if (i == v.size() || (v[i] == ',' && depth == 0)) {
        if (i > start) out.push_back(v.substr(start, i - start));
        start = i + 1;
      }
    }
  }
  return out;
}

}  // namespace bt::source
