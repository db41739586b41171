#include "index/contact_sheet.h"

#include <algorithm>
#include <cstdio>

#include "common/error.h"
#include "common/terminal.h"
#include "data/subset.h"
#include "data/user_command.h"
#include "loader/loader.h"
#include "report/canvas.h"
#include "source/source.h"

namespace bt::index {

std::vector<std::vector<uint8_t>> thumbnails(std::shared_ptr<const data::Dataset> data, const std::vector<size_t>& rows,
                                             int size) {
  loader::LoaderOptions lo;
  lo.num_workers = 0;
  lo.batch_size = int(std::max<size_t>(rows.size(), 1));
  lo.transform.image_size = size;
  lo.output_u8 = true;
  lo.output_float = false;
  lo.on_bad_sample = data::OnBad::kSkip;
  lo.decoded_cache_mb = 0;
  lo.sampler.shuffle = false;
  lo.sampler.batch_size = size_t(lo.batch_size);
  std::vector<std::vector<uint8_t>> out(rows.size());
  loader::Loader loader(std::make_shared<data::Subset>(data, rows), lo);
  loader.start_epoch(0);
  const size_t bytes = size_t(size) * size_t(size) * 3;
  while (auto b = loader.next())
    for (size_t j = 0; j < size_t(b->size); ++j)
      if (out[b->rows[j]].empty()) out[b->rows[j]].assign(b->pixels_u8.data() + j * bytes, b->pixels_u8.data() + (j + 1) * bytes);
  return out;
}

void write_contact_sheet(const std::string& path, std::shared_ptr<const data::Dataset> data,
                         const std::vector<size_t>& rows, const std::vector<float>& scores) {
  constexpr int kThumb = 160, kPad = 12, kLabel = 22, kCols = 4;
  const std::vector<std::vector<uint8_t>> thumbs = thumbnails(data, rows, kThumb);
  const int n = int(rows.size()), cols = std::min(n, kCols), grid_rows = (n + kCols - 1) / kCols;
  report::Canvas c(kPad + cols * (kThumb + kPad), kPad + grid_rows * (kThumb + kLabel + kPad), {255, 255, 255});
  for (int i = 0; i < n; ++i) {
    const int x0 = kPad + (i % kCols) * (kThumb + kPad), y0 = kPad + (i / kCols) * (kThumb + kLabel + kPad);
    const std::vector<uint8_t>& px = thumbs[size_t(i)];
    for (int y = 0; y < kThumb && !px.empty(); ++y)
      for (int x = 0; x < kThumb; ++x) {
        const uint8_t* p = px.data() + (size_t(y) * kThumb + size_t(x)) * 3;
        c.set(x0 + x, y0 + y, {p[0], p[1], p[2]});
      }
    if (px.empty()) c.fill_rect(x0, y0, x0 + kThumb - 1, y0 + kThumb - 1, {220, 220, 220});
    char label[48];
    std::snprintf(label, sizeof label, "#%d  %.3f", i + 1, double(scores[size_t(i)]));
    c.text(x0, y0 + kThumb + 6, label, {20, 20, 20}, 2);
  }
  c.write_png(path);
}

std::vector<size_t> index_rows(const std::vector<nlohmann::json>& images, const std::vector<int64_t>& top,
                               const std::string& images_file) {
  std::vector<size_t> rows;
  for (int64_t k : top) {
    const nlohmann::json& line = images.at(size_t(k));
    const auto it = line.find("row");
    if (!line.is_object() || it == line.end() || !it->is_number_integer() || it->get<int64_t>() < 0)
      fail(images_file, ":", k + 1, ": \"row\" must be a whole number >= 0 (the dataset row of the image)");
    rows.push_back(it->get<size_t>());
  }
  return rows;
}

std::shared_ptr<const data::Dataset> open_index_data(const nlohmann::json& index, const std::string& index_file,
                                                     const std::vector<size_t>& rows) {
  auto text = [&](const char* key, const std::string& fallback) {
    const auto it = index.find(key);
    if (it == index.end()) return fallback;
    if (!it->is_string()) fail(index_file, ": \"", key, "\" must be a string");
    return it->get<std::string>();
  };
  const std::string where = text("data", "");
  if (where.empty()) fail(index_file, ": no \"data\" (the dataset the index was encoded from)");
  data::refuse_command_from(where, index_file, "data");
  source::ReadOptions read;  // as encode read the data
  read.image_column = text("image_column", "image");
  read.caption_column = text("caption_column", "caption");
  read.on_bad = data::OnBad::kSkip;
  auto ds = source::open_source(where, source::source_options(read, index_file + ": data")).dataset;
  for (size_t r : rows)
    if (r >= ds->size())
      fail(index_file, ": its images.jsonl names row ", r, " but its data (", clip_name(where, 200), ") has ",
           ds->size(), " rows: the index was encoded from other data (encode it again)");
  return ds;
}

}  // namespace bt::index
