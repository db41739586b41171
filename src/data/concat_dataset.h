// Several datasets read as one (PyTorch's ConcatDataset): rows [offset_k, offset_k + size_k) are part k's. The
// mixed training set of several --train_file (loader/mix_order.h decides the order it is read in).
//
// Contract:
//  - Every Dataset call is forwarded to the part holding the row; thread-safe as the parts are.
//  - image_key() is the part's key prefixed with "k:" (k the part's index), so two files' equal keys (both folders
//    have images/0001.jpg) never share a decoded-cache entry or count as one image for the batch dedupe.
//  - describe() is the part's own, prefixed with the part's name where that does not already name its file, so a
//    bad row's error always says which dataset it is in. read_image() errors are the part's (they name the file).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace bt::data {

class ConcatDataset final : public Dataset {
 public:
  // names[k]: how errors name part k (the path as given). Throws bt::Error for no parts or a name missing.
  ConcatDataset(std::vector<std::shared_ptr<const Dataset>> parts, std::vector<std::string> names);

  size_t size() const override { return total_; }
  const std::string& caption(size_t i) const override;
  const std::string& image_key(size_t i) const override { return keys_.at(i); }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override;
  std::string describe(size_t i) const override;
  bool is_bad(size_t i) const override;
  std::string bad_reason(size_t i) const override;

  size_t parts() const { return parts_.size(); }
  const Dataset& part(size_t k) const { return *parts_.at(k); }

 private:
  struct Where {
    size_t part, row;
  };
  Where locate(size_t i) const;

  std::vector<std::shared_ptr<const Dataset>> parts_;
  std::vector<std::string> names_, file_names_;
  std::vector<size_t> ends_;  // exclusive end row of each part
  std::vector<std::string> keys_;
  size_t total_ = 0;
};

}  // namespace bt::data
