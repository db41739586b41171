#include "index/contact_sheet.h"

#include <algorithm>
#include <cstdio>

#include "data/subset.h"
#include "loader/loader.h"
#include "report/canvas.h"

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

}  // namespace bt::index
