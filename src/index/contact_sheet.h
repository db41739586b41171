// `bridgetune search --contact_sheet`: the top images of a ranking drawn as one PNG, each with its rank and score.
// Torch-free (the loader reads the thumbnails); search_run.cpp reopens the index's data and calls it.
//
// Contract:
//  - thumbnails(): size x size RGB8 crops of some rows' images, in the order of `rows`, through the loader's eval
//    transform (resize + centre crop, Pillow-exact); an image that cannot be read or decoded gives an empty one.
//  - write_contact_sheet(): a grid of 4 columns of 160 px thumbnails with "#rank  score" under each (grey where
//    the image is unreadable), written atomically as a PNG to `path`. scores[i] belongs to rows[i].
//  - index_rows() / open_index_data(): what an index folder says (files anyone may have shared) checked before it
//    is used, each refusal one line naming the file: a row that is not a whole number, a data value that is a
//    pipe: command (a command read from a file is never run, data/user_command.h), a row past the data's end.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/dataset.h"

namespace bt::index {

std::vector<std::vector<uint8_t>> thumbnails(std::shared_ptr<const data::Dataset> data, const std::vector<size_t>& rows,
                                             int size);

void write_contact_sheet(const std::string& path, std::shared_ptr<const data::Dataset> data,
                         const std::vector<size_t>& rows, const std::vector<float>& scores);

// The dataset rows of the ranked entries top[i] of images.jsonl's lines (their "row").
std::vector<size_t> index_rows(const std::vector<nlohmann::json>& images, const std::vector<int64_t>& top,
                               const std::string& images_file);
// The index's data reopened as encode read it (index.json's data and columns; bad samples skipped), checked to hold
// every one of `rows`.
std::shared_ptr<const data::Dataset> open_index_data(const nlohmann::json& index, const std::string& index_file,
                                                     const std::vector<size_t>& rows);

}  // namespace bt::index
