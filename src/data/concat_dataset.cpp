#include "data/concat_dataset.h"

#include <algorithm>
#include <filesystem>

#include "common/error.h"

namespace bt::data {

ConcatDataset::ConcatDataset(std::vector<std::shared_ptr<const Dataset>> parts, std::vector<std::string> names)
    : parts_(std::move(parts)), names_(std::move(names)) {
  if (parts_.empty()) fail("ConcatDataset: no datasets");
  if (names_.size() != parts_.size()) fail("ConcatDataset: ", names_.size(), " names for ", parts_.size(), " datasets");
  for (size_t k = 0; k < parts_.size(); ++k) {
    const Dataset& p = *parts_[k];
    total_ += p.size();
    ends_.push_back(total_);
    // A folder's name, or a file's: what the part's own describe() shows when it names its file.
    std::filesystem::path path(names_[k]);
    file_names_.push_back((path.has_filename() ? path.filename() : path.parent_path().filename()).string());
    const std::string prefix = std::to_string(k) + ":";
    for (size_t i = 0; i < p.size(); ++i) keys_.push_back(prefix + p.image_key(i));
  }
}

ConcatDataset::Where ConcatDataset::locate(size_t i) const {
  if (i >= total_) fail("ConcatDataset: row ", i, " out of range (", total_, " rows)");
  const size_t k = static_cast<size_t>(std::upper_bound(ends_.begin(), ends_.end(), i) - ends_.begin());
  return {k, i - (k ? ends_[k - 1] : 0)};
}

const std::string& ConcatDataset::caption(size_t i) const {
  const Where w = locate(i);
  return parts_[w.part]->caption(w.row);
}

void ConcatDataset::read_image(size_t i, std::vector<uint8_t>& bytes) const {
  const Where w = locate(i);
  parts_[w.part]->read_image(w.row, bytes);
}

std::string ConcatDataset::describe(size_t i) const {
  const Where w = locate(i);
  std::string own = parts_[w.part]->describe(w.row);
  const std::string& file = file_names_[w.part];
  if (!file.empty() && own.find(file) != std::string::npos) return own;
  return names_[w.part] + ": " + own;
}

bool ConcatDataset::is_bad(size_t i) const {
  const Where w = locate(i);
  return parts_[w.part]->is_bad(w.row);
}

std::string ConcatDataset::bad_reason(size_t i) const {
  const Where w = locate(i);
  return parts_[w.part]->bad_reason(w.row);
}

}  // namespace bt::data
