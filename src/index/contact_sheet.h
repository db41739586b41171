// `bridgetune search --contact_sheet`: the top images of a ranking drawn as one PNG, each with its rank and score.
// Torch-free (the loader reads the thumbnails); search_run.cpp reopens the index's data and calls it.
//
// Contract:
//  - thumbnails(): size x size RGB8 crops of some rows' images, in the order of `rows`, through the loader's eval
//    transform (resize + centre crop, Pillow-exact); an image that cannot be read or decoded gives an empty one.
//  - write_contact_sheet(): a grid of 4 columns of 160 px thumbnails with "#rank  score" under each (grey where
//    the image is unreadable), written atomically as a PNG to `path`. scores[i] belongs to rows[i].
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace bt::index {

std::vector<std::vector<uint8_t>> thumbnails(std::shared_ptr<const data::Dataset> data, const std::vector<size_t>& rows,
                                             int size);

void write_contact_sheet(const std::string& path, std::shared_ptr<const data::Dataset> data,
                         const std::vector<size_t>& rows, const std::vector<float>& scores);

}  // namespace bt::index
