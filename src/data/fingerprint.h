// What identifies a dataset across runs, cheaply: its row count and a 64-bit FNV-1a hash of up to 256 captions
// spread evenly over it (captions, not image paths: the same data moved to another folder is the same data),
// and of those rows' image file names.
// A checkpoint records it; a resume on other data is refused unless asked for (train/torch/train_setup.cpp).
#pragma once
#include <string>

#include "data/dataset.h"

namespace bt::data {

// "N rows, captions 0123456789abcdef"
std::string fingerprint(const Dataset& ds);
// Which image each of the same rows shows, by file name (the last part of its key, so a moved folder is the same
// data, while images shuffled among the rows are not): "images 0123456789abcdef".
std::string image_fingerprint(const Dataset& ds);

}  // namespace bt::data
